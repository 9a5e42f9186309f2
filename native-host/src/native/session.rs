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
    /// The counters as the browser gets them.
    pub(super) fn view(&self) -> StatusView {
        StatusView::of(self.state, &self.progress, DISTILL_EVERY)
    }
}

/// One connection's state.
pub(super) struct Session {
    pub(super) paths: HostPaths,
    pub(super) model: Model,
    pub(super) greeted: bool,
    pub(super) status: Arc<Mutex<Status>>,
    pub(super) crawl: Option<RunningCrawl>,
    pub(super) out: mpsc::Sender<Outgoing>,
    /// Why the saved model could not be loaded (it was kept aside), told at every hello.
    pub(super) model_error: Option<String>,
    /// False when the model file exists but could not be opened: it must not be replaced.
    pub(super) may_save: bool,
    /// The apprentice's bytes as last sent to the browser (built at `get_apprentice` offset 0).
    pub(super) apprentice: Option<Vec<u8>>,
}

impl Session {
    /// Every topic with its example counts.
    pub(super) fn topics(&self) -> Vec<TopicInfo> {
        self.model.topics()
    }

    /// Saves the model; refused when the saved one could not be opened (it is not replaced).
    pub(super) fn save_model(&self) -> Result<(), Refusal> {
        if !self.may_save {
            return Err(Refusal::Failed(
                self.model_error.clone().unwrap_or_default(),
            ));
        }
        let bytes =
            (self.model.to_bytes_within_budget()).map_err(|e| Refusal::Invalid(e.to_string()))?;
        let failed = |e: std::io::Error| Refusal::Failed(format!("saving the model: {e}"));
        std::fs::create_dir_all(&self.paths.dir).map_err(failed)?;
        crate::model_file::write_atomic(&self.paths.model(), &bytes).map_err(failed)?;
        // A shared crawl keeps its model on the server: every worker reloads it from there.
        let shared = self.paths.locator();
        if matches!(shared, Locator::Postgres(_)) {
            off_the_runtime(|| crate::store::open(&shared)?.save_taxonomy(&self.model))?;
        }
        Ok(())
    }

    /// The crawl's counters: the running crawl's, or the database's when none runs here.
    pub(super) fn status(&self) -> StatusView {
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
        st.view()
    }

    /// Answers one request. An edit whose reply fails (it could not be saved, say) is undone,
    /// so the host never keeps an edit it reported as failed.
    pub(super) async fn handle(&mut self, req: Request) -> Result<Reply, Refusal> {
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
        let mut r = self.answer(req).await;
        let mut saved = false;
        if let Ok(reply) = &r {
            // Measured as the browser gets it (after JSON escaping), with room for the envelope.
            let n = serde_json::to_vec(reply).map_or(usize::MAX, |b| b.len());
            if n > MAX_REPLY {
                saved = edit;
                r = Err(Refusal::Failed(format!(
                    "the reply would be {n} bytes, over the browser's limit of {MAX_REPLY}; \
                     nothing was changed"
                )));
            }
        }
        if let (Err(_), Some(m)) = (&r, before) {
            self.model = m;
            if saved {
                // The edit was saved before its reply was measured: save the model as it was.
                if let Err(e) = self.save_model() {
                    r = Err(e);
                }
                self.rejudge();
            }
        }
        r
    }

    /// Hands a running crawl the classifier of the model as it now is.
    pub(super) fn rejudge(&mut self) {
        if let Some(c) = self.crawl.as_ref().filter(|c| !c.task.is_finished()) {
            let _ = c.judge.send(crate::crawl::Judge::of(&mut self.model));
        }
    }

    pub(super) async fn answer(&mut self, req: Request) -> Result<Reply, Refusal> {
        if !matches!(req, Request::Hello { .. }) && !self.greeted {
            return Err(Refusal::NotGreeted);
        }
        match req {
            Request::Hello { version } => self.hello(version),
            Request::Topics {} => Ok(Reply::Topics {
                topics: self.topics(),
            }),
            Request::AddTopic { .. }
            | Request::RenameTopic { .. }
            | Request::MoveTopic { .. }
            | Request::DeleteTopic { .. }
            | Request::SetGood { .. } => self.edit_topic(req),
            Request::AddExample { topic, url, text } => self.add_example(topic, url, text),
            Request::Examples { topic } => self.examples(topic),
            Request::RemoveExample { url } => {
                limit("url", &url, 4096)?;
                self.model.remove_example(&url)?;
                self.edited()
            }
            Request::MoveExample { url, topic } => {
                limit("url", &url, 4096)?;
                self.model.move_example(&url, topic)?;
                self.edited()
            }
            Request::MarkNotRelevant { url, text, undo } => {
                limit("url", &url, 4096)?;
                if let Some(t) = &text {
                    limit("text", t, MAX_TEXT)?;
                }
                self.mark_not_relevant(&url, text, undo)?;
                self.save_model()?;
                let mut all = self.model.not_relevant_urls();
                let total = all.len();
                // This request's page first (when marked), then the others, as many as fit.
                if let Some(i) = all.iter().position(|u| *u == url) {
                    all.swap(0, i);
                }
                let (not_relevant, _) = fit(all, LIST_BYTES);
                Ok(Reply::NotRelevant {
                    topics: self.topics(),
                    not_relevant,
                    not_relevant_total: total,
                })
            }
            Request::SelfTrain { min_p, clear } => self.self_train(min_p, clear),
            Request::GetModel { offset } => chunk(&self.model.to_bytes(), offset, "model"),
            Request::GetApprentice { offset } => self.get_apprentice(offset),
            Request::QueueLinks { urls } => self.queue_links(&urls),
            Request::LinkFates { urls } => self.link_fates(&urls),
            Request::GiveUpHosts { hosts } => self.give_up_hosts(hosts),
            Request::Suggestions {} => self.suggestions(),
            Request::Export {
                what,
                format,
                offset,
            } => export(&self.paths, what, format, offset),
            Request::StartCrawl(start) => self.start_crawl(start).await,
            Request::StopCrawl {} => {
                self.stop_crawl().await;
                Ok(Reply::Status {
                    status: self.status(),
                })
            }
            Request::Status {} => Ok(Reply::Status {
                status: self.status(),
            }),
            Request::NewCrawl {} => self.new_crawl(),
            Request::SetCrawlDb { url } => self.set_crawl_db(url),
            Request::Hubs { top } => Ok(Reply::Hubs(hubs(&self.paths, top.min(200) as usize)?)),
            Request::RecentPages { limit } => Ok(Reply::RecentPages {
                pages: recent_pages(&self.paths, limit.min(2000) as i64)?,
            }),
            Request::Search { query, limit } => search::search(&self.paths, &query, limit),
            Request::WhatsNew { since, limit } => search::whats_new(&self.paths, since, limit),
        }
    }

    /// The handshake: the protocol version must match.
    fn hello(&mut self, version: u64) -> Result<Reply, Refusal> {
        if version != PROTOCOL_VERSION {
            return Err(Refusal::Invalid(format!(
                "protocol version {version} unsupported (host speaks {PROTOCOL_VERSION})"
            )));
        }
        self.greeted = true;
        Ok(Reply::Hello {
            version: PROTOCOL_VERSION,
            host: concat!("forager ", env!("CARGO_PKG_VERSION")),
            model_error: self.model_error.clone(),
            database: self.paths.locator().to_string(),
            crawl: self.status(),
        })
    }

    /// Moves the host's crawl to the server at `url` (checked by connecting), or back to the
    /// crawl file with `None`; the choice is kept in the data directory (only the user may
    /// read it: the URL may hold a password).
    fn set_crawl_db(&mut self, url: Option<String>) -> Result<Reply, Refusal> {
        if self.crawl_running() {
            return Err(Refusal::Busy(
                "stop the crawl first: the crawl's database changes between crawls".into(),
            ));
        }
        let file = self.paths.shared_crawl_file();
        let failed = |e: std::io::Error| Refusal::Failed(format!("{}: {e}", file.display()));
        match url.as_deref().map(str::trim).filter(|u| !u.is_empty()) {
            Some(u) => {
                plain("url", u, 4096)?;
                let Locator::Postgres(u) = Locator::parse(u) else {
                    return Err(Refusal::Invalid(
                        "a shared crawl is a postgres://user:password@host:port/database URL"
                            .into(),
                    ));
                };
                off_the_runtime(|| crate::store::postgres::PgStore::open(&u))?;
                std::fs::create_dir_all(&self.paths.dir).map_err(failed)?;
                write_private(&file, u.as_bytes()).map_err(failed)?;
            }
            None => match std::fs::remove_file(&file) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(failed(e)),
                _ => {}
            },
        }
        self.status
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .progress = Progress::default();
        let at = self.paths.locator();
        Ok(Reply::CrawlDb {
            database: at.to_string(),
            shared: matches!(at, Locator::Postgres(_)),
            status: self.status(),
        })
    }

    /// Sets the crawl database aside so the next crawl starts afresh.
    fn new_crawl(&mut self) -> Result<Reply, Refusal> {
        if self.crawl_running() {
            return Err(Refusal::Busy(
                "stop the crawl first: a new crawl starts from a stopped one".into(),
            ));
        }
        if let Locator::Postgres(_) = self.paths.locator() {
            return Err(Refusal::Invalid(
                "the crawl is shared on a database server: a new crawl there needs a new \
                 database (or go back to this computer's crawl)"
                    .into(),
            ));
        }
        let db = self.paths.db();
        let kept = off_the_runtime(|| Store::set_aside(&db))?;
        self.status
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .progress = Progress::default();
        Ok(Reply::CrawlSetAside {
            kept: kept.map(|p| p.display().to_string()),
            status: self.status(),
        })
    }
}

/// Writes `bytes` to `path` readable by the user alone, through a file beside it renamed
/// into place.
fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let tmp = path.with_extension("tmp");
    let mut open = std::fs::OpenOptions::new();
    open.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o600);
    let mut f = open.open(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// Refuses a field longer than `max` bytes.
pub(super) fn limit(name: &str, v: &str, max: usize) -> Result<(), Refusal> {
    if v.len() > max {
        return Err(Refusal::Invalid(format!(
            "{name:?} is longer than {max} bytes"
        )));
    }
    Ok(())
}

/// Refuses a name longer than `max` bytes or holding control characters (line breaks, tabs,
/// escapes: a name is one line of text).
pub(super) fn plain(name: &str, v: &str, max: usize) -> Result<(), Refusal> {
    limit(name, v, max)?;
    if v.chars().any(char::is_control) {
        return Err(Refusal::Invalid(format!(
            "{name:?} holds control characters (line breaks, tabs, escapes); use plain text"
        )));
    }
    Ok(())
}

/// Refuses anything but an absolute http(s) URL (a page on the web).
pub(super) fn web_url(v: &str) -> Result<(), Refusal> {
    limit("url", v, 4096)?;
    match url::Url::parse(v) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => Ok(()),
        _ => Err(Refusal::Invalid(format!(
            "{} is not an http(s) URL: only web pages can be marked",
            clip(&v.escape_debug().to_string(), 200)
        ))),
    }
}

/// The first items of `items` whose JSON (as sent, escaped) fits in `budget` bytes, and
/// whether any were left out.
pub(super) fn fit<T: serde::Serialize>(items: Vec<T>, budget: usize) -> (Vec<T>, bool) {
    let mut used = 0;
    let n = items.len();
    let kept: Vec<T> = (items.into_iter())
        .take_while(|it| {
            used += serde_json::to_vec(it).map_or(usize::MAX / 2, |b| b.len()) + 1;
            used <= budget
        })
        .collect();
    let cut = kept.len() < n;
    (kept, cut)
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
pub(super) fn stale_edit(model: &Model, v: &Value) -> Option<Refusal> {
    let expect = v.get("expect")?.as_object()?;
    for (field, want) in expect {
        let want = want.as_str().unwrap_or_default();
        let id = v.get(field).and_then(Value::as_u64);
        let have = id.and_then(|id| model.taxonomy().path(id as _).ok());
        if have.as_deref() != Some(want) {
            return Some(Refusal::Stale(format!(
                "{} is not {} on the host (its taxonomy changed since the browser read it); \
                 reload the topics and try again",
                clip(
                    &format!("topic {}", id.map_or("?".into(), |i| i.to_string())),
                    40
                ),
                clip(want, 200)
            )));
        }
    }
    None
}
