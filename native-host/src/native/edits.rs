//! The browser's edits of the model: topics, examples, "not relevant" marks and
//! self-training. Every edit is saved before it is answered.

use super::*;

impl Session {
    /// Saves an edited model and answers with the taxonomy.
    pub(super) fn edited(&mut self) -> Result<Reply, Refusal> {
        self.save_model()?;
        Ok(Reply::Topics {
            topics: self.topics(),
        })
    }

    /// Adds, renames, moves, deletes a topic or marks it good.
    pub(super) fn edit_topic(&mut self, req: Request) -> Result<Reply, Refusal> {
        match req {
            Request::AddTopic { parent, name } => {
                plain("name", &name, 200)?;
                let id = self.model.add_topic(parent, &name, &name)?;
                self.save_model()?;
                Ok(Reply::TopicAdded {
                    id,
                    topics: self.topics(),
                })
            }
            Request::RenameTopic { topic, name } => {
                plain("name", &name, 200)?;
                self.model.rename_topic(topic, &name, &name)?;
                self.edited()
            }
            Request::MoveTopic { topic, parent } => {
                self.model.move_topic(topic, parent)?;
                self.edited()
            }
            Request::DeleteTopic { topic } => {
                let removed_examples = self.model.delete_topic(topic)?;
                self.save_model()?;
                Ok(Reply::TopicDeleted {
                    removed_examples,
                    topics: self.topics(),
                })
            }
            Request::SetGood { topic, good } => {
                self.model.set_good(topic, good)?;
                self.edited()
            }
            _ => Err(Refusal::Invalid("not a topic edit".into())),
        }
    }

    /// Adds a page as an example of `topic`. Said, never silent: a page already an example
    /// of this topic is refused, one of another topic moves and the reply says from where.
    pub(super) fn add_example(
        &mut self,
        topic: TopicId,
        url: String,
        text: String,
    ) -> Result<Reply, Refusal> {
        limit("url", &url, 4096)?;
        limit("text", &text, MAX_TEXT)?;
        let here = self.model.taxonomy().path(topic)?;
        let moved_from = match self.model.example(&url) {
            Some(e) if e.topic == here && !e.self_trained => {
                return Err(Refusal::Invalid(format!(
                    "{url} is already an example of {here}"
                )));
            }
            Some(e) if e.topic != here => Some(e.topic),
            _ => None,
        };
        self.model.add_example(topic, &url, &text)?;
        self.save_model()?;
        Ok(Reply::ExampleAdded {
            topics: self.topics(),
            moved_from,
        })
    }

    /// The examples of `topic`, by URL; bounded, as every reply: a long list says it was cut.
    pub(super) fn examples(&self, topic: TopicId) -> Result<Reply, Refusal> {
        let path = self.model.taxonomy().path(topic)?;
        let mut examples: Vec<_> = (self.model.examples().into_iter())
            .filter(|e| e.topic == path)
            .collect();
        examples.sort_by(|a, b| a.url.cmp(&b.url));
        let mut truncated = examples.len() > MAX_EXAMPLES_LISTED;
        examples.truncate(MAX_EXAMPLES_LISTED);
        let (examples, cut) = fit(examples, LIST_BYTES * 3);
        truncated |= cut;
        Ok(Reply::Examples {
            examples,
            truncated,
        })
    }

    /// Adds a "not relevant" mark (or removes it, `undo`) and hands a running crawl the new
    /// classifier.
    pub(super) fn mark_not_relevant(
        &mut self,
        url: &str,
        text: Option<String>,
        undo: bool,
    ) -> Result<(), Refusal> {
        if undo {
            if !self.model.not_relevant_urls().iter().any(|u| u == url) {
                return Err(Refusal::Invalid(format!(
                    "{url} is not marked not relevant"
                )));
            }
            self.model.remove_example(url)?;
        } else {
            web_url(url)?;
            let text = match text {
                Some(t) => t,
                None => read_only(&self.paths)
                    .ok()
                    .and_then(|db| db.fetched_text(url).ok().flatten())
                    .ok_or_else(|| {
                        Refusal::Missing(format!(
                            "{url} was not fetched by the crawl: send its text"
                        ))
                    })?,
            };
            self.model.mark_not_relevant(url, &text)?;
        }
        self.rejudge();
        Ok(())
    }

    /// Self-training: the crawl's confidently classified pages become examples (or, with
    /// `clear`, the ones added so are removed).
    pub(super) fn self_train(&mut self, min_p: f64, clear: bool) -> Result<Reply, Refusal> {
        let removed = self.model.self_trained_count();
        let (added, pages) = if clear {
            self.model.forget_self_trained();
            (0, 0)
        } else {
            if !self.paths.has_crawl() {
                return Err(Refusal::Missing(
                    "no crawl yet: nothing to learn from".into(),
                ));
            }
            let (paths, model) = (&self.paths, &mut self.model);
            // Reading and classifying every fetched page is blocking work.
            off_the_runtime(|| -> Result<_, Box<dyn std::error::Error>> {
                let db = read_only(paths)?;
                let mut t = model.self_trainer(min_p)?;
                let mut pages = 0usize;
                db.each_fetched_text(|url, text| {
                    pages += 1;
                    t.offer(url, text)
                        .map(|_| ())
                        .map_err(Box::<dyn std::error::Error>::from)
                })?;
                Ok((t.added(), pages))
            })
            .map_err(|e| Refusal::Failed(e.to_string()))?
        };
        self.save_model()?;
        Ok(Reply::SelfTrained {
            added,
            pages,
            removed,
            topics: self.topics(),
        })
    }
}
