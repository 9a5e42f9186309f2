//! Classifier speed: native MB/s and pages/s on one core, model load time, interactive update
//! latency, model size. Uses the FOLDOC mini-web (extracted into target/foldoc when missing),
//! falling back to the generated demo web. Prints numbers; asserts only sanity.

mod common;
use forager::miniweb::MiniWeb;
use forager::parse::page_text;
use forager::synthweb::{SynthConfig, SynthWeb};
use forager::training;
use forager_classifier::{Model, Scratch, TextOptions, TrainOptions};
use std::time::Instant;

fn foldoc() -> Option<MiniWeb> {
    MiniWeb::open(&common::foldoc_dir()?).ok()
}

#[allow(clippy::too_many_lines)] // the benchmark's table, one measure after another
fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let (name, web) = match foldoc() {
        Some(w) => ("FOLDOC", w),
        None => ("generated", SynthWeb::generate(&SynthConfig::default()).web),
    };
    let t = Instant::now();
    let (mut model, _) =
        training::from_miniweb(&web, TextOptions::default(), TrainOptions::default()).unwrap();
    let train_ms = t.elapsed().as_secs_f64() * 1e3;
    let bytes = model.to_bytes();

    let t = Instant::now();
    let reps = 5;
    for _ in 0..reps {
        let mut m = Model::from_bytes(&bytes).unwrap();
        let _ = m.classifier();
    }
    let load_ms = t.elapsed().as_secs_f64() * 1e3 / reps as f64;

    let mut urls: Vec<&String> = web.labels.keys().collect();
    urls.sort();
    let texts: Vec<String> = urls
        .iter()
        .filter_map(|u| web.read_page(u).ok())
        .map(|h| page_text(&h).text)
        .collect();
    let total: usize = texts.iter().map(String::len).sum();
    let c = model.classifier();
    let mut scratch = Scratch::new();
    let mut sink = 0.0;
    for t in &texts {
        sink += c.classify(t, &mut scratch).relevance; // warm the word cache
    }
    let rounds = 5;
    let t = Instant::now();
    for _ in 0..rounds {
        for t in &texts {
            sink += c.classify(t, &mut scratch).relevance;
        }
    }
    let secs = t.elapsed().as_secs_f64();
    let mbs = (total * rounds) as f64 / secs / 1e6;
    let pps = (texts.len() * rounds) as f64 / secs;

    // Web-sized pages: the same text joined into 100 KB documents (FOLDOC entries average
    // under 500 bytes, so per-page costs weigh heavily in the line above).
    let big = join_pages(&texts, 100_000);
    let t = Instant::now();
    for _ in 0..rounds {
        for t in &big {
            sink += c.classify(t, &mut scratch).relevance;
        }
    }
    let big_mbs = (big.iter().map(String::len).sum::<usize>() * rounds) as f64
        / t.elapsed().as_secs_f64()
        / 1e6;

    // A cold scratch: every word goes through the full pipeline once.
    let t = Instant::now();
    let mut cold = Scratch::new();
    for t in &texts {
        sink += c.classify(t, &mut cold).relevance;
    }
    let cold_mbs = total as f64 / t.elapsed().as_secs_f64() / 1e6;

    // The first stage alone: segmentation and case folding.
    let t = Instant::now();
    let mut words = 0usize;
    for t in &texts {
        c.tokenizer().for_each_word(t, |_| words += 1);
    }
    let seg_mbs = total as f64 / t.elapsed().as_secs_f64() / 1e6;

    let topic = model.taxonomy().find(&web.examples[0].0).unwrap();
    let n = 20;
    let t = Instant::now();
    for i in 0..n {
        let url = format!("http://bench.test/{i}");
        model
            .add_example(topic, &url, &texts[i % texts.len()])
            .unwrap();
        let _ = model.classifier();
        model.remove_example(&url).unwrap();
        let _ = model.classifier();
    }
    let update_ms = t.elapsed().as_secs_f64() * 1e3 / (2 * n) as f64;

    println!(
        "classifier bench on the {name} web ({} pages, {:.1} MB of text)",
        texts.len(),
        total as f64 / 1e6
    );
    println!("  train from examples:      {train_ms:8.1} ms");
    println!("  model size:               {:8} bytes", bytes.len());
    println!("  model load (+compile):    {load_ms:8.1} ms");
    println!("  classify, warm, 1 core:   {mbs:8.1} MB/s  {pps:8.0} pages/s");
    println!(
        "  classify, warm, 100 KB:   {big_mbs:8.1} MB/s  ({} pages)",
        big.len()
    );
    println!("  classify, cold cache:     {cold_mbs:8.1} MB/s");
    println!("  segmentation alone:       {seg_mbs:8.1} MB/s  ({words} words)");
    println!("  add or remove 1 example:  {update_ms:8.2} ms (incl. retraining dirty nodes)");
    assert!(sink.is_finite());
}

/// The pages' texts joined, in order, into documents of about `size` bytes each.
fn join_pages(texts: &[String], size: usize) -> Vec<String> {
    let mut out = vec![String::new()];
    for t in texts {
        let last = out.last_mut().expect("never empty");
        if last.len() >= size {
            out.push(t.clone());
        } else {
            if !last.is_empty() {
                last.push('\n');
            }
            last.push_str(t);
        }
    }
    out
}
