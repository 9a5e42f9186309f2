#!/usr/bin/env bash
# Every test: installs what is missing, checks formatting and lints, runs the Rust tests, builds
# the WASM classifier and the host, and runs the browser tests in headless Chromium and Firefox.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step prints the seconds since the start, so a slow step shows in the CI log.
step() { echo "== [$((SECONDS / 60))m$((SECONDS % 60))s] $*"; }

scripts/setup.sh

step "a throwaway PostgreSQL cluster for the shared-crawl tests (stopped and deleted on exit)"
scripts/pg-cluster.sh stop
trap 'scripts/pg-cluster.sh stop' EXIT
FORAGER_TEST_PG=$(scripts/pg-cluster.sh start)
export FORAGER_TEST_PG

step "cargo fmt --check"
cargo fmt --all -- --check
step "cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings
cargo clippy -p forager-classifier --target wasm32-unknown-unknown -- -D warnings
step "cargo test build (release: one optimised build serves the tests, the benches, the host and"
echo "   the browser tests; a debug build of the workspace would be a second full compile)"
cargo test --workspace --release --no-run --message-format=json-render-diagnostics >target/test-binaries.json
step "cargo tests: the test binaries side by side (scripts/run-tests.py), then the doctests"
scripts/run-tests.py <target/test-binaries.json
cargo test --workspace --release --doc
step "benches compile"
cargo bench --workspace --no-run
step "build wasm + host"
scripts/build-wasm.sh
cargo build --release -p forager
step "tsc --noEmit over the extension's JSDoc-typed JS"
(cd tests/browser && npx --no-install tsc -p ../../extension/tsconfig.json)
step "web-ext lint (the extension as Firefox loads it; errors fail, warnings are Chromium-only keys)"
(cd tests/browser && npx --no-install web-ext lint --source-dir ../../extension --self-hosted --no-input)
step "browser tests, 2 files at a time (Chromium: extension, browse, widen, report, wasm-parity, ...; Firefox: firefox, ...)"
(cd tests/browser && npm test)
step "done"
