#!/usr/bin/env bash
# Every test: installs what is missing, checks formatting and lints, runs the Rust tests, builds
# the WASM classifier and the host, and runs the browser tests in headless Chromium and Firefox.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

echo "== a throwaway PostgreSQL cluster for the shared-crawl tests (stopped and deleted on exit)"
scripts/pg-cluster.sh stop
trap 'scripts/pg-cluster.sh stop' EXIT
FORAGER_TEST_PG=$(scripts/pg-cluster.sh start)
export FORAGER_TEST_PG

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings
cargo clippy -p forager-classifier --target wasm32-unknown-unknown -- -D warnings
echo "== cargo test (release: one optimised build serves the tests, the benches, the host and the"
echo "   browser tests; a debug build of the workspace would be a second full compile)"
cargo test --workspace --release
echo "== benches compile"
cargo bench --workspace --no-run
echo "== build wasm + host"
scripts/build-wasm.sh
cargo build --release -p forager
echo "== tsc --noEmit over the extension's JSDoc-typed JS"
(cd tests/browser && npx --no-install tsc -p ../../extension/tsconfig.json)
echo "== web-ext lint (the extension as Firefox loads it; errors fail, warnings are Chromium-only keys)"
(cd tests/browser && npx --no-install web-ext lint --source-dir ../../extension --self-hosted --no-input)
echo "== browser tests (Chromium: extension, browse, widen, report, wasm-parity; Firefox: firefox)"
(cd tests/browser && npm test)
