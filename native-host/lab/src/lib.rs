//! Forager's lab: what measures and demonstrates the crawler rather than runs it — mini-webs
//! with ground truth, the generated web, the mini-web server, simulated reference crawls, the
//! bench, classifier accuracy, crawl reports, the demo and training from examples. It builds on
//! `forager-core`; the core never depends on it.

pub mod accuracy;
pub mod bookmarks;
pub mod confidence;
pub mod demo;
pub mod evaluation;
pub mod highlight;
pub mod hub_quality;
pub mod miniweb;
pub mod partial;
pub mod reference;
pub mod report;
pub mod serve;
pub mod synthweb;
pub mod training;
