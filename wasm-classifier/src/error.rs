//! The classifier's error type.

use thiserror::Error;

/// Everything that can go wrong in the classifier crate.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A topic id or path names no topic.
    #[error("no such topic: {0}")]
    NoSuchTopic(String),
    /// A taxonomy edit would break the tree (cycle, root change, duplicate sibling name, ...).
    #[error("invalid taxonomy edit: {0}")]
    InvalidEdit(String),
    /// An example URL is not in the model.
    #[error("no such example: {0}")]
    NoSuchExample(String),
    /// An argument is out of its range.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The model would pass its size budget.
    #[error("{0}")]
    TooLarge(String),
    /// Model bytes are not a Forager model, are from another version, or are corrupt.
    #[error("bad model bytes: {0}")]
    BadModel(String),
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, Error>;
