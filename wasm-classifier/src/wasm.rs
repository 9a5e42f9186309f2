//! The thin wasm-bindgen layer the extension loads: a JS class over [`Model`].
//!
//! Results cross as plain JS objects (serde-wasm-bindgen); errors as thrown JS `Error`s.

use crate::apprentice::{Apprentice, DEFAULT_D_MAX};
use crate::links::{score_links, LinkSpan};
use crate::model::Model;
use crate::taxonomy::TopicId;
use crate::Scratch;
use serde::Serialize;
use wasm_bindgen::prelude::*;

fn js_err(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

fn to_js<T: Serialize>(v: &T) -> Result<JsValue, JsError> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(js_err)
}

/// A Forager model in the browser: classify text, edit the taxonomy, add examples.
#[wasm_bindgen]
pub struct ForagerModel {
    model: Model,
    scratch: Scratch,
    /// The apprentice of the host's crawl, when the browser has it (link highlighting).
    apprentice: Option<Apprentice>,
}

#[wasm_bindgen]
impl ForagerModel {
    /// Loads a model from its bytes (throws on bad bytes).
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(bytes: &[u8]) -> Result<ForagerModel, JsError> {
        let model = Model::from_bytes(bytes).map_err(js_err)?;
        Ok(ForagerModel {
            model,
            scratch: Scratch::new(),
            apprentice: None,
        })
    }

    /// An empty model with only a root topic.
    #[wasm_bindgen(constructor)]
    pub fn new() -> ForagerModel {
        ForagerModel {
            model: Model::default(),
            scratch: Scratch::new(),
            apprentice: None,
        }
    }

    /// The model's deterministic bytes.
    #[wasm_bindgen(js_name = toBytes)]
    pub fn to_bytes(&self) -> Vec<u8> {
        self.model.to_bytes()
    }

    /// Classifies text: `{best_leaf, best_leaf_id, path: [{topic, p}], relevance, log_relevance, hard_focus}`.
    pub fn classify(&mut self, text: &str) -> Result<JsValue, JsError> {
        let c = self.model.classifier();
        to_js(&c.classify(text, &mut self.scratch))
    }

    /// Classifies the page at `url`: as `classify`, except that a page the user marked not
    /// relevant is "none of your topics" with relevance 0 (the crawl's rule).
    #[wasm_bindgen(js_name = classifyPage)]
    pub fn classify_page(&mut self, url: &str, text: &str) -> Result<JsValue, JsError> {
        let c = self.model.classifier().classify(text, &mut self.scratch);
        let c = if self.model.is_marked_not_relevant(url) {
            c.marked_not_relevant()
        } else {
            c
        };
        to_js(&c)
    }

    /// The tokens the model's text pipeline makes of `text`.
    pub fn tokens(&self, text: &str) -> Result<JsValue, JsError> {
        to_js(&self.model.tokenizer().tokens(text))
    }

    /// All topics: `[{id, parent, path, name, title, good, examples, subtree_examples}]`.
    pub fn topics(&self) -> Result<JsValue, JsError> {
        to_js(&self.model.topics())
    }

    /// All examples: `[{url, topic, tokens}]`.
    pub fn examples(&self) -> Result<JsValue, JsError> {
        to_js(&self.model.examples())
    }

    /// The id of the topic at `path`.
    #[wasm_bindgen(js_name = topicId)]
    pub fn topic_id(&self, path: &str) -> Result<TopicId, JsError> {
        self.model.taxonomy().find(path).map_err(js_err)
    }

    /// Adds a topic under `parent`; returns its id.
    #[wasm_bindgen(js_name = addTopic)]
    pub fn add_topic(
        &mut self,
        parent: TopicId,
        name: &str,
        title: &str,
    ) -> Result<TopicId, JsError> {
        self.model.add_topic(parent, name, title).map_err(js_err)
    }

    /// Renames a topic.
    #[wasm_bindgen(js_name = renameTopic)]
    pub fn rename_topic(&mut self, id: TopicId, name: &str, title: &str) -> Result<(), JsError> {
        self.model.rename_topic(id, name, title).map_err(js_err)
    }

    /// Moves a topic under a new parent.
    #[wasm_bindgen(js_name = moveTopic)]
    pub fn move_topic(&mut self, id: TopicId, new_parent: TopicId) -> Result<(), JsError> {
        self.model.move_topic(id, new_parent).map_err(js_err)
    }

    /// Deletes a topic with its subtree and examples; returns the number of examples removed.
    #[wasm_bindgen(js_name = deleteTopic)]
    pub fn delete_topic(&mut self, id: TopicId) -> Result<usize, JsError> {
        self.model.delete_topic(id).map_err(js_err)
    }

    /// Marks or unmarks a topic good.
    #[wasm_bindgen(js_name = setGood)]
    pub fn set_good(&mut self, id: TopicId, good: bool) -> Result<(), JsError> {
        self.model.set_good(id, good).map_err(js_err)
    }

    /// Adds a page as an example of a topic; returns true when it replaced one with that URL.
    #[wasm_bindgen(js_name = addExample)]
    pub fn add_example(&mut self, topic: TopicId, url: &str, text: &str) -> Result<bool, JsError> {
        self.model.add_example(topic, url, text).map_err(js_err)
    }

    /// Marks a page as about none of the user's topics (a background example).
    #[wasm_bindgen(js_name = markNotRelevant)]
    pub fn mark_not_relevant(&mut self, url: &str, text: &str) -> Result<bool, JsError> {
        self.model.mark_not_relevant(url, text).map_err(js_err)
    }

    /// Removes the example with this URL.
    #[wasm_bindgen(js_name = removeExample)]
    pub fn remove_example(&mut self, url: &str) -> Result<(), JsError> {
        self.model.remove_example(url).map_err(js_err)
    }

    /// Takes the apprentice of the host's crawl from its bytes (throws on bad bytes); returns
    /// its training instances `[low, high]`.
    #[wasm_bindgen(js_name = setApprentice)]
    pub fn set_apprentice(&mut self, bytes: &[u8]) -> Result<Vec<u64>, JsError> {
        let a = Apprentice::from_bytes(bytes).map_err(js_err)?;
        let n = a.instances().to_vec();
        self.apprentice = Some(a);
        Ok(n)
    }

    /// Forgets the apprentice (links are then scored by the words around them).
    #[wasm_bindgen(js_name = clearApprentice)]
    pub fn clear_apprentice(&mut self) {
        self.apprentice = None;
    }

    /// Scores the links of a page: `text` its visible text, `leaves` its DOM leaves,
    /// `links` `[{start, end, anchor}]`; returns `[{score, topic, rule}]` in the same order,
    /// by the host crawler's rule ([`crate::links::score_links`]).
    #[wasm_bindgen(js_name = scoreLinks)]
    pub fn score_links(
        &mut self,
        text: &str,
        leaves: JsValue,
        links: JsValue,
    ) -> Result<JsValue, JsError> {
        let leaves: Vec<String> = serde_wasm_bindgen::from_value(leaves).map_err(js_err)?;
        let links: Vec<LinkSpan> = serde_wasm_bindgen::from_value(links).map_err(js_err)?;
        let c = self.model.classifier();
        let scores = score_links(
            &c,
            self.apprentice.as_ref(),
            text,
            &leaves,
            &links,
            DEFAULT_D_MAX,
            &mut self.scratch,
        );
        to_js(&scores)
    }

    /// Moves an example to another topic.
    #[wasm_bindgen(js_name = moveExample)]
    pub fn move_example(&mut self, url: &str, topic: TopicId) -> Result<(), JsError> {
        self.model.move_example(url, topic).map_err(js_err)
    }
}

impl Default for ForagerModel {
    fn default() -> Self {
        Self::new()
    }
}
