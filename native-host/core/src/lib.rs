//! Forager's crawl core (focused-crawling-1999 §4, crawling-the-web-2004 §2): canonical URLs,
//! polite fetching, parsing, robots.txt, the crawl database, the focused crawl with its frontier
//! policy, the relevance-weighted distiller and the monitor. It knows nothing of mini-webs,
//! benchmarks or the browser.

pub mod address;
pub mod canon;
pub mod crawl;
pub mod distiller;
pub mod export;
pub mod feed;
pub mod fetch;
pub mod input;
pub mod model_file;
pub mod monitor;
pub mod output;
pub mod parse;
pub mod reuse;
pub mod robots;
pub mod store;
pub mod warc;
pub mod widen;
