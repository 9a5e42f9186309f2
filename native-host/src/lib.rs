//! The `forager` command's library: the browser's native-messaging endpoint, its framing and
//! `forager install`, plus the core and lab modules re-exported under one name (as ripgrep's
//! `grep` facade does) for the command, its tests and benches.

pub use forager_core::{
    address, canon, crawl, distiller, export, feed, fetch, input, model_file, monitor, output,
    parse, reuse, robots, store, warc, widen,
};
pub use forager_lab::{
    accuracy, bookmarks, confidence, demo, evaluation, highlight, miniweb, partial, reference,
    report, serve, synthweb, training,
};

pub mod framing;
pub mod install;
pub mod native;
