//! The model's byte format: a magic, a format version and a postcard body.
//!
//! The bytes are deterministic: the vocabulary holds only the terms in use, sorted; examples
//! are sorted by URL; term lists are delta-coded. Decoding validates everything, so untrusted
//! or truncated bytes give an error and never a panic or a model that could misbehave later.

use crate::error::{Error, Result};
use crate::model::{Example, Model};
use crate::taxonomy::{Taxonomy, Topic, BACKGROUND};
use crate::text::TextOptions;
use crate::train::TrainOptions;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// First bytes of every model file.
pub const MAGIC: &[u8; 8] = b"FORAGERM";
/// Current format version.
pub const FORMAT_VERSION: u16 = 3;
/// Largest model accepted, a guard against hostile input.
pub const MAX_MODEL_BYTES: usize = 256 << 20;
/// The size budget of a model that is saved: edits that would pass it are refused, so every
/// saved model loads again (under [`MAX_MODEL_BYTES`]) and answers quickly.
pub const MODEL_BUDGET_BYTES: usize = 64 << 20;

#[derive(Serialize, Deserialize)]
struct ExampleRec {
    url: String,
    topic: u32,
    /// (term id delta from the previous term, count).
    terms: Vec<(u32, u32)>,
}

#[derive(Serialize, Deserialize)]
struct ModelFile {
    text: TextOptions,
    train: TrainOptions,
    topics: Vec<Topic>,
    vocab: Vec<String>,
    examples: Vec<ExampleRec>,
}

/// Version 2 adds which examples came from self-training; a model without any is written as
/// version 1, byte for byte as before.
#[derive(Serialize, Deserialize)]
struct ModelFileV2 {
    base: ModelFile,
    /// Indices into `base.examples`, strictly increasing.
    self_trained: Vec<u32>,
}

/// Version 3 has the body of version 2 and may hold background examples (topic
/// [`BACKGROUND`]); a model without any is written as version 2 or 1, byte for byte as before.
const BACKGROUND_VERSION: u16 = 3;

/// Encodes a model to bytes.
pub fn encode(model: &Model) -> Vec<u8> {
    let mut used: Vec<u32> = model
        .examples
        .values()
        .flat_map(|e| e.terms.iter().map(|&(t, _)| t))
        .collect();
    used.sort_unstable();
    used.dedup();
    used.sort_by(|a, b| model.vocab[*a as usize].cmp(&model.vocab[*b as usize]));
    let mut remap = vec![u32::MAX; model.vocab.len()];
    for (new, &old) in used.iter().enumerate() {
        remap[old as usize] = new as u32;
    }
    let vocab = used
        .iter()
        .map(|&t| model.vocab[t as usize].clone())
        .collect();
    let examples = model
        .examples
        .iter()
        .map(|(url, e)| {
            let mut terms: Vec<(u32, u32)> = e
                .terms
                .iter()
                .map(|&(t, c)| (remap[t as usize], c))
                .collect();
            terms.sort_unstable();
            let mut prev = 0;
            for (t, _) in terms.iter_mut() {
                let d = *t - prev;
                prev = *t;
                *t = d;
            }
            ExampleRec {
                url: url.clone(),
                topic: e.topic,
                terms,
            }
        })
        .collect();
    let file = ModelFile {
        text: model.text,
        train: model.train,
        topics: model.taxonomy.topics().cloned().collect(),
        vocab,
        examples,
    };
    let self_trained: Vec<u32> = (model.examples.values().enumerate())
        .filter(|(_, e)| e.self_trained)
        .map(|(i, _)| i as u32)
        .collect();
    let mut out = Vec::with_capacity(1024);
    out.extend_from_slice(MAGIC);
    // Serializing plain structs into a Vec cannot fail.
    let background = model.examples.values().any(|e| e.topic == BACKGROUND);
    let body = if self_trained.is_empty() && !background {
        out.extend_from_slice(&1u16.to_le_bytes());
        postcard::to_stdvec(&file).unwrap_or_default()
    } else {
        let version = if background { BACKGROUND_VERSION } else { 2 };
        out.extend_from_slice(&version.to_le_bytes());
        postcard::to_stdvec(&ModelFileV2 {
            base: file,
            self_trained,
        })
        .unwrap_or_default()
    };
    out.extend_from_slice(&body);
    out
}

/// Decodes and validates model bytes.
pub fn decode(bytes: &[u8]) -> Result<Model> {
    let bad = |m: String| Error::BadModel(m);
    if bytes.len() > MAX_MODEL_BYTES {
        return Err(bad(format!("{} bytes is over the limit", bytes.len())));
    }
    if bytes.len() < MAGIC.len() + 2 || &bytes[..MAGIC.len()] != MAGIC {
        return Err(bad("not a Forager model (bad magic)".into()));
    }
    let version = u16::from_le_bytes([bytes[8], bytes[9]]);
    let corrupt = |e: postcard::Error| bad(format!("corrupt body: {e}"));
    let (file, self_trained, rest): (ModelFile, Vec<u32>, &[u8]) = match version {
        1 => {
            let (f, rest) = postcard::take_from_bytes(&bytes[10..]).map_err(corrupt)?;
            (f, Vec::new(), rest)
        }
        2 | BACKGROUND_VERSION => {
            let (f, rest): (ModelFileV2, _) =
                postcard::take_from_bytes(&bytes[10..]).map_err(corrupt)?;
            (f.base, f.self_trained, rest)
        }
        _ => {
            return Err(bad(format!(
                "format version {version}, this build reads 1 to {FORMAT_VERSION}"
            )))
        }
    };
    if !rest.is_empty() {
        return Err(bad(format!("{} trailing bytes", rest.len())));
    }
    if self_trained.windows(2).any(|w| w[0] >= w[1])
        || self_trained
            .last()
            .is_some_and(|&i| i as usize >= file.examples.len())
    {
        return Err(bad("self-trained example list is malformed".into()));
    }
    let mut self_trained = self_trained.into_iter().peekable();
    file.train.validate().map_err(bad)?;
    if file.text.min_chars > 40 {
        return Err(bad("min_chars out of range".into()));
    }
    let taxonomy = Taxonomy::from_topics(file.topics)?;
    for w in file.vocab.windows(2) {
        if w[0] >= w[1] {
            return Err(bad("vocabulary is not strictly sorted".into()));
        }
    }
    let n = file.vocab.len() as u64;
    let mut examples = BTreeMap::new();
    for (index, rec) in file.examples.into_iter().enumerate() {
        let is_self_trained = self_trained.next_if_eq(&(index as u32)).is_some();
        let background = rec.topic == BACKGROUND && version >= BACKGROUND_VERSION;
        if !background && !taxonomy.contains(rec.topic) {
            return Err(bad(format!("example {} has unknown topic", rec.url)));
        }
        let terms = decode_terms(&rec.url, &rec.terms, n)?;
        let url = rec.url;
        if url.is_empty() {
            return Err(bad("example with an empty URL".into()));
        }
        let example = Example {
            topic: rec.topic,
            terms,
            self_trained: is_self_trained,
        };
        if examples.insert(url.clone(), example).is_some() {
            return Err(bad(format!("duplicate example {url}")));
        }
    }
    Ok(Model::from_parts(
        file.text, file.train, taxonomy, file.vocab, examples,
    ))
}

/// An example's term list from its deltas: strictly increasing term ids below `n`, counts
/// above zero.
fn decode_terms(url: &str, deltas: &[(u32, u32)], n: u64) -> Result<Vec<(u32, u32)>> {
    let mut terms = Vec::with_capacity(deltas.len());
    let mut cur: u64 = 0;
    for (i, &(d, c)) in deltas.iter().enumerate() {
        if (i > 0 && d == 0) || c == 0 {
            return Err(Error::BadModel(format!(
                "example {url} has a malformed term list"
            )));
        }
        cur += u64::from(d);
        if cur >= n {
            return Err(Error::BadModel(format!(
                "example {url} names a term out of range"
            )));
        }
        terms.push((cur as u32, c));
    }
    Ok(terms)
}

impl Model {
    /// The model's deterministic bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(self)
    }

    /// The model's bytes, refused when they pass [`MODEL_BUDGET_BYTES`]: what every save
    /// writes (loading refuses more than [`MAX_MODEL_BYTES`]).
    pub fn to_bytes_within_budget(&self) -> Result<Vec<u8>> {
        let bytes = encode(self);
        if bytes.len() > MODEL_BUDGET_BYTES {
            return Err(Error::TooLarge(format!(
                "the model would be {} MB, over its budget of {} MB ({} examples); remove \
                 examples or marks first",
                bytes.len() >> 20,
                MODEL_BUDGET_BYTES >> 20,
                self.examples.len()
            )));
        }
        Ok(bytes)
    }

    /// Reads model bytes, validating them.
    pub fn from_bytes(bytes: &[u8]) -> Result<Model> {
        decode(bytes)
    }
}
