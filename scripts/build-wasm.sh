#!/usr/bin/env bash
# Builds the WebAssembly classifier into extension/pkg (generated, ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --target wasm32-unknown-unknown -p forager-classifier
# The .d.ts files type the generated glue for `tsc --noEmit` over the extension.
wasm-bindgen --target web --out-dir extension/pkg \
  target/wasm32-unknown-unknown/release/forager_classifier.wasm
# The starter model the extension classifies with before the host is installed.
cargo run --release -q -p forager -- starter-model --force --out extension/pkg/starter.fgm
