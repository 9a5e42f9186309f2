// @ts-check
// WebAssembly classifier parity with the native one, in headless Chromium.
//
// Trains a model on the FOLDOC mini-web with the native CLI (or takes FORAGER_MODEL), classifies
// a deterministic sample of labelled pages natively, then loads extension/pkg in a page served
// from 127.0.0.1 and checks that the WASM build tokenizes and classifies the native text the same
// way, that the browser's own text extraction (extension/lib/visible-text.js) agrees on the best
// leaf, that the model bytes round-trip and survive edits, that bad bytes throw cleanly, and
// measures classification latency (printed and written to out/wasm-bench.json, never asserted).
//
// Environment: FORAGER_MODEL (a model file; skips training), FORAGER_BIN (default
// <repo>/target/release/forager), CHROMIUM_PATH (default /usr/bin/chromium).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';

const run = promisify(execFile);

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..', '..');
const SHARED = path.resolve(REPO, '..', 'shared');
const TARGET = path.join(REPO, 'target');
const FOLDOC = path.join(TARGET, 'foldoc');
const EXTENSION = path.join(REPO, 'extension');
const OUT = path.join(HERE, 'out');
const FORAGER = process.env.FORAGER_BIN || path.join(TARGET, 'release', 'forager');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

const GOOD = '/Computing/Networking';
const SAMPLE = 40;
const REL_TOL = 1e-9;
const MIN_AGREEMENT = 0.95;
const BENCH_BYTES = 100 * 1024;
const BENCH_WARMUP = 5;
const BENCH_RUNS = 50;

/** @type {{tmp: string, modelPath: string, modelBytes: Buffer, pages: any[], native: any[],
 *   server: http.Server | null, base: string, browser: import('playwright-core').Browser | null,
 *   page: import('playwright-core').Page | null, pageErrors: string[], crashed: boolean, info: any}} */
const S = {
  tmp: '', modelPath: '', modelBytes: Buffer.alloc(0), pages: [], native: [],
  server: null, base: '', browser: null, page: null, pageErrors: [], crashed: false, info: {},
};

// ---------------------------------------------------------------------------------------------
// Setup helpers (node side)

/** Extracts the FOLDOC mini-web into target/foldoc unless it is already there. */
async function ensureFoldoc() {
  if (existsSync(path.join(FOLDOC, 'labels.tsv'))) return;
  const tarball = path.join(SHARED, 'miniweb', 'foldoc.tar.gz');
  assert.ok(existsSync(tarball), `FOLDOC tarball not found at ${tarball}`);
  await mkdir(TARGET, { recursive: true });
  // Extract beside the destination and rename, so a half-done extraction is never taken for one.
  const scratch = await mkdtemp(path.join(TARGET, '.foldoc-'));
  try {
    await run('tar', ['xzf', tarball, '-C', scratch], { maxBuffer: 1 << 24 });
    if (!existsSync(path.join(FOLDOC, 'labels.tsv'))) {
      await rm(FOLDOC, { recursive: true, force: true });
      await rename(path.join(scratch, 'foldoc'), FOLDOC);
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * Runs the native CLI, failing with its stderr on error.
 * @param {string[]} args
 */
async function forager(args) {
  try {
    return await run(FORAGER, args, { maxBuffer: 1 << 28 });
  } catch (e) {
    const err = /** @type {any} */ (e);
    throw new Error(`forager ${args.slice(0, 3).join(' ')} ... failed (${err.code}):\n${err.stderr || err.message}`);
  }
}

/**
 * The file under sites/ that answers `url`.
 * @param {string} url
 */
function urlToFile(url) {
  const u = new URL(url);
  let p = decodeURIComponent(u.pathname);
  if (p.endsWith('/')) p += 'index.html';
  return path.join(FOLDOC, 'sites', u.host, p);
}

/** Every k-th labelled page that is not a training example and exists, about SAMPLE of them. */
async function samplePages() {
  const examples = new Set(
    (await readFile(path.join(FOLDOC, 'examples.tsv'), 'utf8'))
      .split('\n').filter(Boolean).map((l) => l.split('\t')[1]),
  );
  const labelled = (await readFile(path.join(FOLDOC, 'labels.tsv'), 'utf8'))
    .split('\n').filter(Boolean)
    .map((l) => { const [url, labels] = l.split('\t'); return { url, labels: labels.split('|') }; })
    .filter((r) => !examples.has(r.url) && r.url.endsWith('.html') && existsSync(urlToFile(r.url)));
  const k = Math.max(1, Math.floor(labelled.length / SAMPLE));
  const out = [];
  for (let i = 0; i < labelled.length && out.length < SAMPLE; i += k) {
    out.push({ ...labelled[i], file: urlToFile(labelled[i].url), index: out.length });
  }
  return out;
}

/** Serves extension/ (under /pkg/, /lib/, ...), the test page, the model and the sampled pages. */
async function startServer() {
  const types = /** @type {Record<string, string>} */ ({
    '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
    '.wasm': 'application/wasm', '.html': 'text/html; charset=utf-8', '.json': 'application/json',
    '.css': 'text/css; charset=utf-8',
  });
  const server = http.createServer(async (req, res) => {
    try {
      const { pathname } = new URL(req.url || '/', 'http://127.0.0.1');
      /** @type {Buffer | null} */
      let body = null;
      let type = 'application/octet-stream';
      if (pathname === '/' || pathname === '/test.html') {
        body = Buffer.from('<!DOCTYPE html><html><head><meta charset="utf-8"><title>Forager WASM parity</title></head><body><p>Forager WASM parity test page</p></body></html>');
        type = types['.html'];
      } else if (pathname === '/model.bin') {
        body = S.modelBytes;
      } else if (pathname.startsWith('/pages/')) {
        const page = S.pages[Number(pathname.slice('/pages/'.length).replace(/\.html$/, ''))];
        if (page) { body = await readFile(page.file); type = types['.html']; }
      } else {
        const file = path.normalize(path.join(EXTENSION, decodeURIComponent(pathname)));
        if (file.startsWith(EXTENSION + path.sep) && existsSync(file)) {
          body = await readFile(file);
          type = types[path.extname(file)] || type;
        }
      }
      if (!body) { res.writeHead(404, { 'content-type': 'text/plain' }).end('not found'); return; }
      res.writeHead(200, {
        'content-type': type, 'content-length': body.length, 'cache-control': 'no-store',
        // Cross-origin isolation gives performance.now() 5 µs resolution instead of 100 µs.
        'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp',
      });
      res.end(body);
    } catch (e) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(String(e));
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(undefined));
  });
  const addr = /** @type {import('node:net').AddressInfo} */ (server.address());
  S.server = server;
  S.base = `http://127.0.0.1:${addr.port}`;
}

// ---------------------------------------------------------------------------------------------
// Comparison helpers

/**
 * Whether two floats agree within REL_TOL relative (non-finite values and JSON nulls must match).
 * @param {number | null} a
 * @param {number | null} b
 */
function close(a, b) {
  if (a === b) return true;
  if (typeof a !== 'number' || typeof b !== 'number' || !Number.isFinite(a) || !Number.isFinite(b)) {
    const norm = (/** @type {any} */ x) => (typeof x === 'number' && Number.isFinite(x) ? x : String(x ?? 'non-finite'));
    return norm(a) === norm(b) || (!Number.isFinite(Number(a ?? NaN)) && !Number.isFinite(Number(b ?? NaN)));
  }
  const scale = Math.max(Math.abs(a), Math.abs(b));
  return Math.abs(a - b) <= REL_TOL * scale || scale < 1e-300;
}

/**
 * Describes the first difference of two token lists, or returns null when they are equal.
 * @param {string[]} a native
 * @param {string[]} b wasm
 */
function tokenDiff(a, b) {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  if (i === n && a.length === b.length) return null;
  return `lengths native ${a.length} / wasm ${b.length}; first difference at token ${i}: ` +
    `native ${JSON.stringify(a.slice(Math.max(0, i - 3), i + 5))} vs wasm ${JSON.stringify(b.slice(Math.max(0, i - 3), i + 5))}`;
}

/**
 * Differences between a native and a WASM classification, as text lines (empty when equal).
 * @param {any} n native
 * @param {any} w wasm
 */
function classificationDiff(n, w) {
  const d = [];
  if (n.best_leaf !== w.best_leaf) d.push(`best_leaf native ${n.best_leaf} vs wasm ${w.best_leaf}`);
  const nt = n.path.map((/** @type {any} */ s) => s.topic);
  const wt = w.path.map((/** @type {any} */ s) => s.topic);
  if (JSON.stringify(nt) !== JSON.stringify(wt)) {
    d.push(`path native ${JSON.stringify(nt)} vs wasm ${JSON.stringify(wt)}`);
  } else {
    n.path.forEach((/** @type {any} */ s, /** @type {number} */ i) => {
      if (!close(s.p, w.path[i].p)) d.push(`p(${s.topic}) native ${s.p} vs wasm ${w.path[i].p}`);
    });
  }
  if (!close(n.relevance, w.relevance)) d.push(`relevance native ${n.relevance} vs wasm ${w.relevance}`);
  if (!close(n.log_relevance, w.log_relevance)) d.push(`log_relevance native ${n.log_relevance} vs wasm ${w.log_relevance}`);
  if (n.hard_focus !== w.hard_focus) d.push(`hard_focus native ${n.hard_focus} vs wasm ${w.hard_focus}`);
  return d;
}

/**
 * Runs `fn` in the test page; fails the test if the page crashed or threw uncaught errors.
 * @template T, A
 * @param {(arg: A) => T | Promise<T>} fn
 * @param {A} [arg]
 * @returns {Promise<T>}
 */
async function inPage(fn, arg) {
  assert.ok(S.page, 'the browser page is not up (setup failed)');
  const out = await S.page.evaluate(/** @type {any} */ (fn), arg);
  assert.equal(S.crashed, false, 'the page crashed');
  assert.deepEqual(S.pageErrors, [], 'uncaught errors in the page');
  return /** @type {T} */ (out);
}

// ---------------------------------------------------------------------------------------------
// Setup and teardown

before(async () => {
  S.tmp = await mkdtemp(path.join(os.tmpdir(), 'forager-wasm-parity-'));
  const pkgJs = path.join(EXTENSION, 'pkg', 'forager_classifier.js');
  assert.ok(existsSync(pkgJs) && existsSync(path.join(EXTENSION, 'pkg', 'forager_classifier_bg.wasm')),
    `the WASM package is missing (${pkgJs}): build it with wasm-bindgen --target web --out-dir extension/pkg`);
  assert.ok(existsSync(FORAGER), `the native CLI is missing (${FORAGER}): cargo build --release -p forager`);
  assert.ok(existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM}: apt-get install chromium`);

  await ensureFoldoc();
  if (process.env.FORAGER_MODEL) {
    S.modelPath = path.resolve(process.env.FORAGER_MODEL);
  } else {
    S.modelPath = path.join(S.tmp, 'foldoc.model');
    await forager(['train', '--web', FOLDOC, '--out', S.modelPath]);
  }
  S.modelBytes = await readFile(S.modelPath);

  S.pages = await samplePages();
  assert.ok(S.pages.length >= SAMPLE * 0.9, `only ${S.pages.length} pages sampled`);
  const { stdout } = await forager(['classify', '--model', S.modelPath, '--good', GOOD, '--json', '--with-text',
    ...S.pages.map((p) => p.file)]);
  const lines = stdout.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
  assert.equal(lines.length, S.pages.length, 'native classify printed one line per input');
  const byInput = new Map(lines.map((l) => [l.input, l]));
  S.native = S.pages.map((p, i) => byInput.get(p.file) ?? lines[i]);

  await startServer();
  const home = path.join(S.tmp, 'home');
  await mkdir(home, { recursive: true });
  S.browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), XDG_CACHE_HOME: path.join(home, '.cache') },
  });
  S.page = await S.browser.newPage();
  S.page.on('pageerror', (e) => S.pageErrors.push(String(e)));
  S.page.on('crash', () => { S.crashed = true; });
  await S.page.goto(`${S.base}/test.html`);

  // Load the module, the model and visibleText once; later tests reuse them via globalThis.
  const init = await inPage(async ({ good }) => {
    const g = /** @type {any} */ (globalThis);
    const pkgUrl = '/pkg/forager_classifier.js'; // a variable, so type checkers leave the page-side URL alone
    g.F = await import(pkgUrl);
    await g.F.default({ module_or_path: '/pkg/forager_classifier_bg.wasm' });
    const libUrl = '/lib/visible-text.js';
    g.visibleText = (await import(libUrl)).visibleText;
    g.modelBytes = new Uint8Array(await (await fetch('/model.bin')).arrayBuffer());
    g.model = g.F.ForagerModel.fromBytes(g.modelBytes);
    // Mirror the CLI's --good: exactly the given topics are good.
    for (const t of g.model.topics()) if (t.good) g.model.setGood(t.id, false);
    g.model.setGood(g.model.topicId(good), true);
    return { bytes: g.modelBytes.length, topics: g.model.topics().length, examples: g.model.examples().length,
      userAgent: navigator.userAgent };
  }, { good: GOOD });
  assert.equal(init.bytes, S.modelBytes.length);
  S.info = init;
}, { timeout: 20 * 60 * 1000 });

after(async () => {
  await S.page?.close().catch(() => {});
  await S.browser?.close().catch(() => {});
  if (S.server) {
    S.server.closeAllConnections();
    await new Promise((resolve) => S.server?.close(() => resolve(undefined)));
  }
  if (S.tmp) await rm(S.tmp, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// Tests

test('WASM tokens equal native tokens on the native text of every sampled page', async () => {
  const texts = S.native.map((n) => n.text);
  const wasm = await inPage((texts) => texts.map((t) => /** @type {any} */ (globalThis).model.tokens(t)), texts);
  /** @type {string[]} */
  const bad = [];
  S.native.forEach((n, i) => {
    const d = tokenDiff(n.tokens, wasm[i]);
    if (d) bad.push(`${S.pages[i].url}: ${d}`);
  });
  assert.deepEqual(bad, [], `token differences on ${bad.length}/${S.pages.length} pages`);
});

test('WASM classification equals native (best leaf, path, probabilities, relevance)', async () => {
  const texts = S.native.map((n) => n.text);
  const wasm = await inPage((texts) => texts.map((t) => /** @type {any} */ (globalThis).model.classify(t)), texts);
  /** @type {string[]} */
  const bad = [];
  S.native.forEach((n, i) => {
    const d = classificationDiff(n, wasm[i]);
    if (d.length) bad.push(`${S.pages[i].url}: ${d.join('; ')}`);
  });
  assert.deepEqual(bad, [], `classification differences on ${bad.length}/${S.pages.length} pages`);
});

test('visibleText + DOMParser in the browser gives the native best leaf on >= 95% of pages', async (t) => {
  const wasm = await inPage(async (n) => {
    const g = /** @type {any} */ (globalThis);
    const out = [];
    for (let i = 0; i < n; i++) {
      const html = await (await fetch(`/pages/${i}.html`)).text();
      const doc = new DOMParser().parseFromString(html, 'text/html');
      const text = g.visibleText(doc);
      out.push({ text, best_leaf: g.model.classify(text).best_leaf });
    }
    return out;
  }, S.pages.length);
  let agree = 0;
  let sameText = 0;
  /** @type {string[]} */
  const disagreements = [];
  S.native.forEach((n, i) => {
    if (wasm[i].best_leaf === n.best_leaf) agree++;
    else disagreements.push(`${S.pages[i].url}: native ${n.best_leaf} vs browser ${wasm[i].best_leaf}`);
    if (wasm[i].text === n.text) sameText++;
  });
  const rate = agree / S.pages.length;
  const msg = `visibleText best-leaf agreement: ${agree}/${S.pages.length} (${(100 * rate).toFixed(1)}%); ` +
    `identical text: ${sameText}/${S.pages.length}`;
  t.diagnostic(msg);
  for (const d of disagreements) t.diagnostic(`disagreement ${d}`);
  if (sameText < S.pages.length) {
    const i = S.native.findIndex((n, j) => wasm[j].text !== n.text);
    t.diagnostic(`first text difference (${S.pages[i].url}):\n  native:  ${JSON.stringify(S.native[i].text.slice(0, 400))}\n  browser: ${JSON.stringify(wasm[i].text.slice(0, 400))}`);
  }
  assert.ok(rate >= MIN_AGREEMENT, msg);
  // The host and the extension read pages by one rule: the same text, not just the same leaf.
  assert.equal(sameText, S.pages.length, msg);
});

test('visibleText skips script/style/noscript/template/head and collapses whitespace', async () => {
  const r = await inPage(() => {
    const g = /** @type {any} */ (globalThis);
    const html = '<!DOCTYPE html><html><head><title>Title</title><style>p{}</style></head><body>\n' +
      '  <h1>Hello\u00a0 <b>big</b>\tworld</h1><script>var x = "no";</script><noscript>no</noscript>' +
      '<template><p>no</p></template><p>one<br>two<!-- no --></p><div>  <span> </span><i>three</i></div>' +
      '<svg><text>four</text><style>.x{}</style></svg></body></html>';
    const doc = new DOMParser().parseFromString(html, 'text/html');
    return {
      doc: g.visibleText(doc),
      h1: g.visibleText(doc.querySelector('h1')),
      script: g.visibleText(doc.querySelector('script')),
      empty: g.visibleText(new DOMParser().parseFromString('', 'text/html')),
    };
  });
  assert.equal(r.doc, 'Hello big world one two three four');
  assert.equal(r.h1, 'Hello big world');
  assert.equal(r.script, '');
  assert.equal(r.empty, '');
});

test('visibleText leaves out navigation boilerplate, as the host does', async () => {
  const r = await inPage(() => {
    const g = /** @type {any} */ (globalThis);
    const parse = (/** @type {string} */ h) => new DOMParser().parseFromString(h, 'text/html');
    const page = parse('<body><div id="nav"><a href="/">Home</a> menu</div><nav>Sections</nav>' +
      '<ul class="site-menu"><li>Links</li></ul><div role="navigation">Jump</div>' +
      '<div id="content"><h1>Router</h1><p>forwards <b>packets</b></p>' +
      '<aside>See also</aside><div class="navigator">kept</div></div>' +
      '<div id="page_footer">Copyright</div><footer>Contact</footer></body>');
    return {
      page: g.visibleText(page),
      onlyNav: g.visibleText(parse('<nav><a href="/a">Alpha</a> <a href="/b">Beta</a></nav>')),
      navElement: g.visibleText(page.querySelector('nav')),
      after: g.visibleText(parse('<div class="menu"><p>in</p></div><p>out</p>')),
      wrapper: g.visibleText(parse('<div class="content-sidebar-wrap"><main><p>Body text</p></main>' +
        '<aside class="sidebar">Widgets</aside></div><div id="footer">Legal</div>')),
      // 400 deep: Chromium re-parents nodes past 512 levels, html5ever does not.
      deep: g.visibleText(parse('<div class=nav>'.repeat(400) + '<main>x</main>' + '</div>'.repeat(400) +
        '<div class=nav>y</div>')),
      // The same cases as the host's parse::tests::main_text_skips_navigation_boilerplate.
      cases: [
        '<div class="sidebar">Widgets<template><main></main></template></div><p>Body</p>',
        '<div class="sidebar">Widgets<noscript><article>a</article></noscript></div><p>Body</p>',
        '<div class=nav></div><p>x</p>',
        '<div id=menu><div role=main>m</div></div><nav>n</nav>',
        '<div class="nav"><article>a</article></div><footer>f</footer>',
        '<nav>Home</nav>\ufeff',
        '<p>a\u0085b\ufeffc</p>',
      ].map((h) => g.visibleText(parse(h))),
      detached: (() => {
        const d = document.createElement('div');
        d.innerHTML = '<div class="menu"><main>in</main></div><nav>out</nav>';
        return g.visibleText(d);
      })(),
    };
  });
  assert.equal(r.page, 'Router forwards packets kept');
  assert.equal(r.onlyNav, 'Alpha Beta');
  assert.equal(r.navElement, 'Sections');
  assert.equal(r.after, 'out');
  assert.equal(r.wrapper, 'Body text');
  assert.equal(r.deep, 'x');
  assert.deepEqual(r.cases, ['Body', 'Body', 'x', 'm', 'a', 'Home', 'a b c']);
  assert.equal(r.detached, 'in');
});

test('toBytes(fromBytes(b)) is b byte for byte; good flags survive a round trip', async () => {
  const r = await inPage((texts) => {
    const g = /** @type {any} */ (globalThis);
    const m = g.F.ForagerModel.fromBytes(g.modelBytes);
    const out = m.toBytes();
    m.free();
    let firstDiff = -1;
    const n = Math.max(out.length, g.modelBytes.length);
    for (let i = 0; i < n; i++) if (out[i] !== g.modelBytes[i]) { firstDiff = i; break; }
    // g.model has Networking marked good: its bytes must reload to the same classifier.
    const goodBytes = g.model.toBytes();
    const m2 = g.F.ForagerModel.fromBytes(goodBytes);
    const mismatches = [];
    for (const t of texts) {
      const a = JSON.stringify(g.model.classify(t));
      const b = JSON.stringify(m2.classify(t));
      if (a !== b) mismatches.push({ a, b });
    }
    const goodAfter = m2.topics().filter((/** @type {any} */ t) => t.good).map((/** @type {any} */ t) => t.path);
    const rebytes = m2.toBytes();
    m2.free();
    return { len: g.modelBytes.length, outLen: out.length, firstDiff, mismatches: mismatches.slice(0, 3),
      goodAfter, goodBytesStable: rebytes.length === goodBytes.length && rebytes.every((/** @type {number} */ x, /** @type {number} */ i) => x === goodBytes[i]) };
  }, S.native.map((n) => n.text));
  assert.equal(r.firstDiff, -1, `re-encoded model differs from the original at byte ${r.firstDiff} (lengths ${r.len} -> ${r.outLen})`);
  assert.deepEqual(r.goodAfter, [GOOD], 'good flags after a round trip');
  assert.deepEqual(r.mismatches, [], 'fromBytes(toBytes()) classifies identically');
  assert.ok(r.goodBytesStable, 'toBytes is stable across a round trip with good flags set');
});

test('edits then their undoing give back the original bytes', async () => {
  const r = await inPage(({ good }) => {
    const g = /** @type {any} */ (globalThis);
    const orig = g.modelBytes;
    const same = (/** @type {Uint8Array} */ b) => {
      if (b.length !== orig.length) return `length ${b.length} vs ${orig.length}`;
      for (let i = 0; i < b.length; i++) if (b[i] !== orig[i]) return `first difference at byte ${i}`;
      return null;
    };
    /** @type {[string, boolean][]} */
    const steps = [];
    const m = g.F.ForagerModel.fromBytes(orig);
    const nTopics = m.topics().length;
    const nExamples = m.examples().length;
    const parent = m.topicId('/Computing');
    const id = m.addTopic(parent, 'WasmParityScratch', 'WASM parity scratch topic');
    steps.push(['topicId of new topic', m.topicId('/Computing/WasmParityScratch') === id]);
    const url = 'http://wasm-parity.test/scratch.html';
    const replaced = m.addExample(id, url, 'Zyxwvut quokkaflux networking packets routers frobnicated zyxwvut');
    steps.push(['addExample returned false', replaced === false]);
    steps.push(['example count +1', m.examples().length === nExamples + 1]);
    const c = m.classify('zyxwvut quokkaflux frobnicated');
    steps.push(['classify sees the new topic', typeof c.best_leaf === 'string']);
    m.removeExample(url);
    steps.push(['example count back', m.examples().length === nExamples]);
    m.deleteTopic(id);
    steps.push(['topic count back', m.topics().length === nTopics]);
    const diffA = same(m.toBytes());
    // An example with never-seen words on an existing topic, then removed: vocabulary must shrink back.
    const leaf = m.topicId(good);
    m.addExample(leaf, url, 'Qwertyuiopzz plinkozoid networking ethernet qwertyuiopzz');
    m.classify('plinkozoid ethernet');
    m.removeExample(url);
    const diffB = same(m.toBytes());
    // Rename there and back.
    const topic = m.topics().find((/** @type {any} */ t) => t.id === leaf);
    m.renameTopic(leaf, 'NetworkingRenamed', 'Renamed');
    m.renameTopic(leaf, topic.name, topic.title);
    const diffC = same(m.toBytes());
    m.free();
    return { steps, diffA, diffB, diffC };
  }, { good: GOOD });
  for (const [name, ok] of r.steps) assert.ok(ok, name);
  assert.equal(r.diffA, null, 'add topic + add example + remove example + delete topic');
  assert.equal(r.diffB, null, 'add + remove an example with new words on an existing topic');
  assert.equal(r.diffC, null, 'rename a topic and rename it back');
});

test('fromBytes throws a JS Error on truncated, random and corrupted bytes and never traps', async () => {
  const r = await inPage(() => {
    const g = /** @type {any} */ (globalThis);
    const orig = g.modelBytes;
    let seed = 0x9e3779b9;
    const rand = () => { seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5; return (seed >>> 0) / 4294967296; };
    const randomBytes = (/** @type {number} */ n) => Uint8Array.from({ length: n }, () => Math.floor(rand() * 256));
    /** @type {[string, Uint8Array][]} */
    const mustThrow = [];
    for (const cut of [0, 1, 7, 8, 9, 10, 11, 16, 64, orig.length >> 3, orig.length >> 2, orig.length >> 1,
      orig.length - 100, orig.length - 2, orig.length - 1]) {
      if (cut >= 0 && cut < orig.length) mustThrow.push([`truncated at ${cut}`, orig.slice(0, cut)]);
    }
    for (const n of [1, 10, 100, 4096, 100000]) mustThrow.push([`${n} random bytes`, randomBytes(n)]);
    for (const n of [0, 1, 16, 1000, 100000]) {
      const b = new Uint8Array(10 + n);
      b.set(orig.slice(0, 10));
      b.set(randomBytes(n), 10);
      mustThrow.push([`magic + version + ${n} random bytes`, b]);
    }
    const trailing = new Uint8Array(orig.length + 1);
    trailing.set(orig);
    mustThrow.push(['one trailing byte', trailing]);
    const results = [];
    for (const [name, bytes] of mustThrow) {
      try {
        const m = g.F.ForagerModel.fromBytes(bytes);
        m.free();
        results.push({ name, threw: false });
      } catch (e) {
        const err = /** @type {any} */ (e);
        results.push({ name, threw: true, trap: err instanceof WebAssembly.RuntimeError, message: String(err?.message ?? err).slice(0, 200) });
      }
    }
    // Single-byte corruptions may decode to a valid model; they must then still classify, never trap.
    const corrupted = [];
    for (let k = 0; k < 40; k++) {
      const b = orig.slice();
      const at = 10 + Math.floor(rand() * (orig.length - 10));
      b[at] ^= 1 + Math.floor(rand() * 255);
      try {
        const m = g.F.ForagerModel.fromBytes(b);
        try { m.classify('ethernet router packet protocol'); corrupted.push({ at, outcome: 'loaded' }); } finally { m.free(); }
      } catch (e) {
        const trap = e instanceof WebAssembly.RuntimeError;
        corrupted.push({ at, outcome: trap ? `TRAP ${e}` : 'threw' });
      }
    }
    // The module must still work afterwards.
    const alive = typeof g.model.classify('ethernet router packet protocol').best_leaf === 'string';
    return { results, corrupted, alive };
  });
  const notThrown = r.results.filter((x) => !x.threw).map((x) => x.name);
  const traps = r.results.filter((x) => x.trap).map((x) => `${x.name}: ${x.message}`);
  const corruptTraps = r.corrupted.filter((x) => x.outcome.startsWith('TRAP'));
  assert.deepEqual(notThrown, [], 'fromBytes accepted bad bytes');
  assert.deepEqual(traps, [], 'fromBytes trapped (a Rust panic) instead of returning an error');
  assert.deepEqual(corruptTraps, [], 'a corrupted model trapped');
  assert.ok(r.alive, 'the module still classifies after the bad inputs');
});

test('latency benchmark (printed and written to out/wasm-bench.json; not asserted)', async (t) => {
  // ~100 KB of real page text.
  const parts = [];
  let size = 0;
  for (let i = 0; size < BENCH_BYTES; i = (i + 1) % S.native.length) {
    parts.push(S.native[i].text);
    size += Buffer.byteLength(S.native[i].text) + 1;
  }
  const text = parts.join('\n');
  const r = await inPage(({ text, warmup, runs }) => {
    const g = /** @type {any} */ (globalThis);
    const median = (/** @type {number[]} */ xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
    const loads = [];
    const firsts = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const m = g.F.ForagerModel.fromBytes(g.modelBytes);
      const t1 = performance.now();
      m.classify('warm up the compiled classifier');
      const t2 = performance.now();
      m.free();
      loads.push(t1 - t0);
      firsts.push(t2 - t1);
    }
    const m = g.F.ForagerModel.fromBytes(g.modelBytes);
    m.setGood(m.topicId('/Computing/Networking'), true);
    for (let i = 0; i < warmup; i++) m.classify(text);
    const times = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      m.classify(text);
      times.push(performance.now() - t0);
    }
    m.free();
    return { fromBytesMs: median(loads), firstClassifyMs: median(firsts), classifyMs: median(times),
      minMs: Math.min(...times), maxMs: Math.max(...times), textBytes: new TextEncoder().encode(text).length };
  }, { text, warmup: BENCH_WARMUP, runs: BENCH_RUNS });
  const mbps = r.textBytes / 1e6 / (r.classifyMs / 1000);
  const bench = {
    date: new Date().toISOString(),
    browser: `${S.browser?.version()}`,
    userAgent: S.info.userAgent,
    modelBytes: S.modelBytes.length,
    textBytes: r.textBytes,
    warmup: BENCH_WARMUP,
    runs: BENCH_RUNS,
    classifyMedianMs: r.classifyMs,
    classifyMinMs: r.minMs,
    classifyMaxMs: r.maxMs,
    classifyMBps: mbps,
    fromBytesMedianMs: r.fromBytesMs,
    firstClassifyAfterLoadMedianMs: r.firstClassifyMs,
  };
  const lines = [
    `wasm classify 100KB: ${r.classifyMs.toFixed(2)} ms/page (median), ${mbps.toFixed(1)} MB/s`,
    `fromBytes: ${r.fromBytesMs.toFixed(2)} ms (model ${S.modelBytes.length} bytes; first classify after load ${r.firstClassifyMs.toFixed(2)} ms)`,
  ];
  for (const l of lines) t.diagnostic(l);
  await mkdir(OUT, { recursive: true });
  await writeFile(path.join(OUT, 'wasm-bench.json'), JSON.stringify(bench, null, 2) + '\n');
});
