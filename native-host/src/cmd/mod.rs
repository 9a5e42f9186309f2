//! One module per `forager` subcommand: its arguments (`Args`) and what it does (`run`).

pub(crate) mod bench;
pub(crate) mod classify;
pub(crate) mod crawl;
pub(crate) mod demo;
pub(crate) mod distill;
pub(crate) mod eval;
pub(crate) mod export;
pub(crate) mod feed;
pub(crate) mod gen_web;
pub(crate) mod highlight_eval;
pub(crate) mod install;
pub(crate) mod links;
pub(crate) mod not_relevant;
pub(crate) mod partial_web;
pub(crate) mod report;
pub(crate) mod search;
pub(crate) mod serve_web;
pub(crate) mod sql;
pub(crate) mod starter_model;
pub(crate) mod status;
pub(crate) mod train;
pub(crate) mod uninstall;
