//! Forager's crawl host: the focused crawler, its crawl database and the browser's
//! native-messaging endpoint, behind the `forager` command (focused-crawling-1999 §4).

pub mod accuracy;
pub mod address;
pub mod bookmarks;
pub mod canon;
pub mod crawl;
pub mod demo;
pub mod distiller;
pub mod evaluation;
pub mod export;
pub mod fetch;
pub mod framing;
pub mod install;
pub mod miniweb;
pub mod model_file;
pub mod monitor;
pub mod native;
pub mod parse;
pub mod partial;
pub mod reference;
pub mod report;
pub mod robots;
pub mod serve;
pub mod store;
pub mod synthweb;
pub mod training;
pub mod warc;
