#!/usr/bin/env bash
# Installs what the tests need on a fresh machine; each step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_BINDGEN_VERSION=$(grep -A1 '^name = "wasm-bindgen"$' Cargo.lock | sed -n 's/^version = "\(.*\)"/\1/p')

need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v firefox-esr >/dev/null 2>&1 || need_apt+=(firefox-esr)
# PostgreSQL's server for the shared-crawl tests (scripts/pg-cluster.sh starts a throwaway one).
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need_apt+=(postgresql)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: apt-get install ${need_apt[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >&2
fi

rustup target list --installed | grep -qx wasm32-unknown-unknown \
  || rustup target add wasm32-unknown-unknown >&2
rustup component list --installed | grep -q '^clippy' || rustup component add clippy >&2
rustup component list --installed | grep -q '^rustfmt' || rustup component add rustfmt >&2

if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WASM_BINDGEN_VERSION" ]; then
  echo "setup: cargo install wasm-bindgen-cli $WASM_BINDGEN_VERSION (a few minutes)" >&2
  # Not --locked: the CLI's lockfile pins a crate version the registry here lacks.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" >&2
fi

# An independent WARC reader for the browser tests (they check the archive Forager writes).
WARCIO_VERSION=1.7.4
python3 -c "import importlib.metadata as m, sys; sys.exit(m.version('warcio') != '$WARCIO_VERSION')" 2>/dev/null \
  || python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore "warcio==$WARCIO_VERSION" >&2

# An independent Atom parser for the feed test (tests/search.rs checks what `forager feed` writes).
FEEDPARSER_VERSION=6.0.12
python3 -c "import importlib.metadata as m, sys; sys.exit(m.version('feedparser') != '$FEEDPARSER_VERSION')" 2>/dev/null \
  || python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore "feedparser==$FEEDPARSER_VERSION" >&2

if [ ! -d tests/browser/node_modules/playwright-core ] || [ ! -d tests/browser/node_modules/typescript ] \
  || [ ! -d tests/browser/node_modules/@types/chrome ] || [ ! -d tests/browser/node_modules/puppeteer-core ] \
  || [ ! -d tests/browser/node_modules/web-ext ]; then
  (cd tests/browser && npm ci --no-audit --no-fund >&2)
fi
