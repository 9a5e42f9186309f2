//! Forager's topic classifier: a taxonomy of topics with examples, a hierarchical naive Bayes
//! classifier over it, and the relevance R(d) that steers the focused crawler
//! (Chakrabarti, van den Berg, Dom: "Focused crawling", 1999, §2-3).
//!
//! The crate is plain Rust and knows nothing of the browser; [`wasm`] (compiled only for
//! `wasm32`) is the thin wasm-bindgen layer the extension loads.

pub mod apprentice;
pub mod background;
pub mod classify;
pub mod codec;
pub mod error;
pub mod links;
pub mod model;
pub mod segment;
pub mod self_train;
pub mod stats;
pub mod taxonomy;
pub mod text;
pub mod train;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use background::{BackgroundMethod, BackgroundOptions, BackgroundReport};
pub use classify::{Classification, Classifier, PathStep, Scratch};
pub use error::{Error, Result};
pub use model::{ExampleInfo, Model, TopicInfo};
pub use self_train::SelfTrainer;
pub use taxonomy::{Taxonomy, Topic, TopicId, BACKGROUND, BACKGROUND_PATH, ROOT};
pub use text::{TextOptions, Tokenizer};
pub use train::TrainOptions;
