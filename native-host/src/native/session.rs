//! One connection's session: the model it edits, the requests it answers and the replies it
//! builds. The crawl it starts lives in `crawl_task`, the events it sends in `events`.

use super::*;

/// The crawl's live state, shared by the crawl task and the request handler.
#[derive(Clone, Debug, Default)]
pub(super) struct Status {
    pub(super) state: &'static str,
    pub(super) progress: Progress,
}

impl Status {
    pub(super) fn json(&self) -> Value {
        let p = &self.progress;
        let state = if self.state.is_empty() {
            "idle"
        } else {
            self.state
        };
        // A rate only while crawling; errors are pages given up on, in all runs.
        let rate = if state == "idle" {
            0.0
        } else {
            p.pages_per_sec
        };
        json!({
            "state": state,
            "fetched": p.fetched, "frontier": p.frontier, "pages_per_sec": rate,
            "errors": p.given_up, "recent_relevance": p.recent_relevance,
            "alarms": p.alarms, "paused": p.paused, "hosts_waiting": p.hosts_waiting,
            "parked": p.parked, "distill_every": DISTILL_EVERY,
        })
    }
}

/// One connection's state.
pub(super) struct Session {
    pub(super) paths: HostPaths,
    pub(super) model: Model,
    pub(super) greeted: bool,
    pub(super) status: Arc<Mutex<Status>>,
    pub(super) crawl: Option<RunningCrawl>,
    pub(super) out: mpsc::Sender<Value>,
    /// Why the saved model could not be loaded (it was kept aside), told at every hello.
    pub(super) model_error: Option<String>,
    /// False when the model file exists but could not be opened: it must not be replaced.
    pub(super) may_save: bool,
}

impl Session {
    pub(super) fn topics(&self) -> Value {
        json!(self.model.topics())
    }

    pub(super) fn save_model(&self) -> Result<(), Refusal> {
        if !self.may_save {
            return Err(self.model_error.clone().unwrap_or_default());
        }
        std::fs::create_dir_all(&self.paths.dir).map_err(|e| e.to_string())?;
        crate::model_file::write_atomic(&self.paths.model(), &self.model.to_bytes())
            .map_err(|e| format!("saving the model: {e}"))
    }

    pub(super) fn status(&self) -> Value {
        let mut st = self.status.lock().unwrap_or_else(|p| p.into_inner());
        if self.crawl.as_ref().is_some_and(|c| c.task.is_finished()) {
            // A crawl task that ended without saying so (it panicked) is not running.
            st.state = "idle";
        }
        if st.state.is_empty() || st.state == "idle" {
            // No crawl running in this process: describe the crawl database as it stands, so a
            // reconnecting extension sees the crawl an earlier host made.
            if let Some(p) = db_progress(&self.paths) {
                st.progress = p;
            }
        }
        st.json()
    }

    /// Answers one request. An edit whose reply fails (it could not be saved, say) is undone,
    /// so the host never keeps an edit it reported as failed.
    pub(super) async fn handle(&mut self, req: Request) -> Result<Value, Refusal> {
        let edit = matches!(
            req,
            Request::AddTopic { .. }
                | Request::RenameTopic { .. }
                | Request::MoveTopic { .. }
                | Request::DeleteTopic { .. }
                | Request::SetGood { .. }
                | Request::AddExample { .. }
                | Request::RemoveExample { .. }
                | Request::MoveExample { .. }
                | Request::MarkNotRelevant { .. }
                | Request::SelfTrain { .. }
        );
        self.settle_crawl().await;
        let before = (edit && self.greeted).then(|| self.model.clone());
        let r = self.answer(req).await;
        if let (Err(_), Some(m)) = (&r, before) {
            self.model = m;
        }
        r
    }

    pub(super) async fn answer(&mut self, req: Request) -> Result<Value, Refusal> {
        if !matches!(req, Request::Hello { .. }) && !self.greeted {
            return Err("send hello first".into());
        }
        let edited = |s: &mut Session| -> Result<Value, Refusal> {
            s.save_model()?;
            Ok(json!({"topics": s.topics()}))
        };
        let limit = |name: &str, v: &str, max: usize| -> Result<(), Refusal> {
            if v.len() > max {
                return Err(format!("{name:?} is longer than {max} bytes"));
            }
            Ok(())
        };
        match req {
            Request::Hello { version } => {
                if version != PROTOCOL_VERSION {
                    return Err(format!(
                        "protocol version {version} unsupported (host speaks {PROTOCOL_VERSION})"
                    ));
                }
                self.greeted = true;
                Ok(json!({"version": PROTOCOL_VERSION,
                    "host": concat!("forager ", env!("CARGO_PKG_VERSION")),
                    "model_error": self.model_error,
                    "crawl": self.status()}))
            }
            Request::Topics {} => Ok(json!({"topics": self.topics()})),
            Request::AddTopic { parent, name } => {
                limit("name", &name, 200)?;
                let id = self
                    .model
                    .add_topic(parent, &name, &name)
                    .map_err(|e| e.to_string())?;
                let mut r = edited(self)?;
                r["id"] = json!(id);
                Ok(r)
            }
            Request::RenameTopic { topic, name } => {
                limit("name", &name, 200)?;
                self.model
                    .rename_topic(topic, &name, &name)
                    .map_err(|e| e.to_string())?;
                edited(self)
            }
            Request::MoveTopic { topic, parent } => {
                self.model
                    .move_topic(topic, parent)
                    .map_err(|e| e.to_string())?;
                edited(self)
            }
            Request::DeleteTopic { topic } => {
                let n = self.model.delete_topic(topic).map_err(|e| e.to_string())?;
                let mut r = edited(self)?;
                r["removed_examples"] = json!(n);
                Ok(r)
            }
            Request::SetGood { topic, good } => {
                self.model
                    .set_good(topic, good)
                    .map_err(|e| e.to_string())?;
                edited(self)
            }
            Request::AddExample { topic, url, text } => {
                limit("url", &url, 4096)?;
                limit("text", &text, MAX_TEXT)?;
                let here = (self.model.taxonomy().path(topic)).map_err(|e| e.to_string())?;
                // Said, never silent: a page already an example of this topic is refused, one
                // of another topic moves and the reply says from where.
                let moved_from = match self.model.example(&url) {
                    Some(e) if e.topic == here && !e.self_trained => {
                        return Err(format!("{url} is already an example of {here}"));
                    }
                    Some(e) if e.topic != here => Some(e.topic),
                    _ => None,
                };
                self.model
                    .add_example(topic, &url, &text)
                    .map_err(|e| e.to_string())?;
                let mut r = edited(self)?;
                if let Some(from) = moved_from {
                    r["moved_from"] = json!(from);
                }
                Ok(r)
            }
            Request::Examples { topic } => {
                let path = (self.model.taxonomy().path(topic)).map_err(|e| e.to_string())?;
                let mut list: Vec<_> = (self.model.examples().into_iter())
                    .filter(|e| e.topic == path)
                    .collect();
                list.sort_by(|a, b| a.url.cmp(&b.url));
                // Bounded, as every reply: a long list says it was cut.
                let truncated = list.len() > MAX_EXAMPLES_LISTED;
                list.truncate(MAX_EXAMPLES_LISTED);
                Ok(json!({"examples": list, "truncated": truncated}))
            }
            Request::RemoveExample { url } => {
                limit("url", &url, 4096)?;
                self.model.remove_example(&url).map_err(|e| e.to_string())?;
                edited(self)
            }
            Request::MoveExample { url, topic } => {
                limit("url", &url, 4096)?;
                self.model
                    .move_example(&url, topic)
                    .map_err(|e| e.to_string())?;
                edited(self)
            }
            Request::MarkNotRelevant { url, text, undo } => {
                limit("url", &url, 4096)?;
                if let Some(t) = &text {
                    limit("text", t, MAX_TEXT)?;
                }
                self.mark_not_relevant(&url, text, undo)?;
                let mut r = edited(self)?;
                r["not_relevant"] = json!(self.model.not_relevant_urls());
                Ok(r)
            }
            Request::GetModel { offset } => chunk(&self.model.to_bytes(), offset, "model"),
            Request::Export {
                what,
                format,
                offset,
            } => {
                let paths = self.paths.clone();
                if what == protocol::ExportWhat::Warc {
                    let (total, data) = off_the_runtime(|| {
                        crate::warc::joined_range(&paths.warc_prefix(), offset, MODEL_CHUNK)
                    })
                    .map_err(|e| format!("reading the WARC archive: {e}"))?;
                    if total == 0 {
                        return Err(
                            "no WARC archive yet: start a crawl with \"Record WARC\"".into()
                        );
                    }
                    return chunk_reply(total, offset, &data, "export");
                }
                let text = off_the_runtime(|| export_text(&paths, what, format))?;
                chunk(text.as_bytes(), offset, "export")
            }
            Request::StartCrawl(start) => self.start_crawl(start).await,
            Request::StopCrawl {} => {
                self.stop_crawl().await;
                Ok(json!({"status": self.status()}))
            }
            Request::Status {} => Ok(json!({"status": self.status()})),
            Request::NewCrawl {} => {
                if self.crawl_running() {
                    return Err(
                        "stop the crawl first: a new crawl starts from a stopped one".into(),
                    );
                }
                let db = self.paths.db();
                let kept = off_the_runtime(|| Store::set_aside(&db)).map_err(|e| e.to_string())?;
                self.status
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .progress = Progress::default();
                Ok(json!({"kept": kept.map(|p| p.display().to_string()), "status": self.status()}))
            }
            Request::Hubs { top } => {
                hubs(&self.paths, top.min(200) as usize).map_err(|e| e.to_string())
            }
            Request::SelfTrain { min_p, clear } => {
                let removed = self.model.self_trained_count();
                if clear {
                    self.model.forget_self_trained();
                    let mut r = edited(self)?;
                    r["added"] = json!(0);
                    r["pages"] = json!(0);
                    r["removed"] = json!(removed);
                    return Ok(r);
                }
                if !self.paths.db().exists() {
                    return Err("no crawl yet: nothing to learn from".into());
                }
                let (paths, model) = (&self.paths, &mut self.model);
                // Reading and classifying every fetched page is blocking work.
                let (added, pages) =
                    off_the_runtime(|| -> Result<_, Box<dyn std::error::Error>> {
                        let db = read_only(paths)?;
                        let mut t = model.self_trainer(min_p)?;
                        let mut pages = 0usize;
                        db.read().each_fetched_text(|url, text| {
                            pages += 1;
                            t.offer(url, text)
                                .map(|_| ())
                                .map_err(Box::<dyn std::error::Error>::from)
                        })?;
                        Ok((t.added(), pages))
                    })
                    .map_err(|e| e.to_string())?;
                let mut r = edited(self)?;
                r["added"] = json!(added);
                r["pages"] = json!(pages);
                r["removed"] = json!(removed);
                Ok(r)
            }
            Request::RecentPages { limit } => {
                let pages =
                    recent_pages(&self.paths, limit.min(2000) as i64).map_err(|e| e.to_string())?;
                Ok(json!({"pages": pages}))
            }
        }
    }

    /// Adds or removes a "not relevant" mark and hands a running crawl the new classifier.
    pub(super) fn mark_not_relevant(
        &mut self,
        url: &str,
        text: Option<String>,
        undo: bool,
    ) -> Result<(), Refusal> {
        if undo {
            if !self.model.not_relevant_urls().iter().any(|u| u == url) {
                return Err(format!("{url} is not marked not relevant"));
            }
            self.model.remove_example(url).map_err(|e| e.to_string())?;
        } else {
            let text = match text {
                Some(t) => t,
                None => read_only(&self.paths)
                    .ok()
                    .and_then(|db| db.read().fetched_text(url).ok().flatten())
                    .ok_or_else(|| format!("{url} was not fetched by the crawl: send its text"))?,
            };
            self.model
                .mark_not_relevant(url, &text)
                .map_err(|e| e.to_string())?;
        }
        if let Some(c) = self.crawl.as_ref().filter(|c| !c.task.is_finished()) {
            let _ = c.judge.send(crate::crawl::Judge::of(&mut self.model));
        }
        Ok(())
    }
}

/// The chunk of `bytes` at `offset` as `get_model` and `export` reply with it (base64, at
/// most `MODEL_CHUNK` bytes); `what` names it in the refusal of an offset past its end.
pub(super) fn chunk(bytes: &[u8], offset: u64, what: &str) -> Result<Value, Refusal> {
    let start = usize::try_from(offset)
        .unwrap_or(usize::MAX)
        .min(bytes.len());
    let end = start.saturating_add(MODEL_CHUNK).min(bytes.len());
    chunk_reply(bytes.len() as u64, offset, &bytes[start..end], what)
}

/// The reply of one chunk, `data`, at `offset` of `total` bytes.
pub(super) fn chunk_reply(
    total: u64,
    offset: u64,
    data: &[u8],
    what: &str,
) -> Result<Value, Refusal> {
    if offset > total {
        return Err(format!("offset beyond the {what}"));
    }
    Ok(json!({"total": total, "offset": offset,
        "data": base64::engine::general_purpose::STANDARD.encode(data)}))
}

/// The text `export` sends: a list as CSV or JSON Lines, or the HTML report.
pub(super) fn export_text(
    paths: &HostPaths,
    what: protocol::ExportWhat,
    format: Option<crate::export::Format>,
) -> Result<String, Refusal> {
    use crate::export::What;
    use protocol::ExportWhat as W;
    if !paths.db().exists() {
        return Err("there is no crawl yet: start one first".into());
    }
    let db = read_only(paths).map_err(|e| e.to_string())?;
    let list = match what {
        W::Hubs => What::Hubs,
        W::Authorities => What::Authorities,
        W::Pages => What::Pages,
        W::Warc => return Err("the WARC archive is sent as bytes".into()),
        W::Report => {
            let r = crate::report::build(&db.read(), 20).map_err(|e| e.to_string())?;
            return Ok(crate::report::html(&r, "Forager crawl report"));
        }
    };
    let format = format.ok_or("give a format: csv or jsonl")?;
    crate::export::export(&db.read(), list, format).map_err(|e| e.to_string())
}

/// The saved model, or the starter one with the reason when there is none or it could not be
/// read; an unreadable file is kept aside so the next edit cannot overwrite it.
pub(super) fn load_model(paths: &HostPaths) -> (Model, Option<String>, bool) {
    use crate::model_file::Loaded;
    match crate::model_file::load_or_set_aside(&paths.model()) {
        Ok(Loaded::Model(m)) => (*m, None, true),
        Ok(Loaded::Missing) => (starter_model(), None, true),
        Ok(Loaded::SetAside { kept, why }) => {
            let msg = format!(
                "the saved model could not be read ({why}); it was kept as {} and the starter \
                 taxonomy was loaded",
                kept.display()
            );
            eprintln!("forager: {msg}");
            (starter_model(), Some(msg), true)
        }
        Err(e) => {
            // Unreadable for another reason (permissions): edits would fail to save as well.
            let msg = format!("the saved model could not be opened: {e}; edits are not saved");
            eprintln!("forager: {msg}");
            (starter_model(), Some(msg), false)
        }
    }
}

/// Why an edit made against another copy of the taxonomy must be refused: its optional
/// `expect` object gives, for each topic field it names (`topic`, `parent`), the path the
/// sender saw; the host refuses when its topic of that id has another path, so a stale browser
/// never edits the wrong topic.
pub(super) fn stale_edit(model: &Model, v: &Value) -> Option<String> {
    let expect = v.get("expect")?.as_object()?;
    for (field, want) in expect {
        let want = want.as_str().unwrap_or_default();
        let id = v.get(field).and_then(Value::as_u64);
        let have = id.and_then(|id| model.taxonomy().path(id as _).ok());
        if have.as_deref() != Some(want) {
            return Some(format!(
                "{} is not {} on the host (its taxonomy changed since the browser read it); \
                 reload the topics and try again",
                clip(
                    &format!("topic {}", id.map_or("?".into(), |i| i.to_string())),
                    40
                ),
                clip(want, 200)
            ));
        }
    }
    None
}
