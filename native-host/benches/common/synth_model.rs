//! A generated web and a model trained on it, written to a scenario's folder: the set-up the
//! kill scenario and the scaling bench share.

use std::path::{Path, PathBuf};

/// The generated web of `sites` sites, its astronomy task, and the path of a model trained on
/// the web and written to `dir/model.fgm`.
pub fn astronomy_web(
    sites: usize,
    dir: &Path,
) -> (forager::synthweb::SynthWeb, forager::miniweb::Task, PathBuf) {
    let synth = forager::synthweb::SynthWeb::generate(&forager::synthweb::SynthConfig {
        sites,
        ..Default::default()
    });
    let task = synth.web.task("astronomy").unwrap().clone();
    let (model, _) = forager::training::from_miniweb(
        &synth.web,
        forager_classifier::TextOptions::default(),
        forager_classifier::TrainOptions::default(),
    )
    .unwrap();
    let model_path = dir.join("model.fgm");
    std::fs::write(&model_path, model.to_bytes()).unwrap();
    (synth, task, model_path)
}
