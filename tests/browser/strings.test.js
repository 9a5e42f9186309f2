// @ts-check
// No internal words reach the user (#29): every sentence the extension can show (string and
// template literals with a space in its scripts, text and titles in its pages) and every refusal
// the real host gives to requests a user can cause is checked for Rust enum names (PageBudget,
// FrontierEmpty, RobotsUnavailable...), OS error numbers ("os error 111") and internal request
// names (start_crawl...). The enum names come from the Rust sources, the request names from
// protocol.js and messages.js, so a new one is checked without editing this test.
//
// Environment: FORAGER_BIN (helpers/paths.js).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as acorn from 'acorn';
import { EXTENSION, FORAGER, REPO } from './helpers/paths.js';

/** Rust enums whose variant names must never be shown. */
const RUST_ENUMS = [
  ['native-host/core/src/crawl/mod.rs', 'StopReason'],
  ['native-host/core/src/crawl/blame.rs', 'Cause'],
  ['native-host/core/src/crawl/blame.rs', 'Fault'],
  ['native-host/core/src/fetch.rs', 'FetchError'],
  ['native-host/core/src/crawl/config.rs', 'Mode'],
  ['native-host/src/native/reply.rs', 'RefusalCode'],
];

/** Variant names of `name` in the Rust file `file` (CamelCase words of two humps or more). */
async function variants(file, name) {
  const src = await readFile(path.join(REPO, file), 'utf8');
  const body = new RegExp(`pub enum ${name}\\s*\\{([\\s\\S]*?)\\n\\}`).exec(src)?.[1];
  assert.ok(body, `enum ${name} not found in ${file}`);
  const names = [...body.matchAll(/^\s*([A-Z][A-Za-z0-9]+)\s*[,({]/gm)].map((m) => m[1]);
  assert.ok(names.length > 1, `${name}: ${names}`);
  // One-hump words (Url, Dns, Soft) are ordinary English as often as not.
  return names.filter((n) => /^[A-Z][a-z0-9]+[A-Z]/.test(n));
}

/** The request and message names of the protocol (protocol.js's RequestMap, messages.js's UiRequest). */
async function requestNames() {
  const names = new Set();
  const protocol = await readFile(path.join(EXTENSION, 'lib', 'protocol.js'), 'utf8');
  for (const m of protocol.matchAll(/^ \* {3}(\w+): \{fields/gm)) names.add(m[1]);
  const messages = await readFile(path.join(EXTENSION, 'lib', 'messages.js'), 'utf8');
  for (const m of messages.matchAll(/type: '([a-z_]+)'/g)) names.add(m[1]);
  // Names with an underscore only: a one-word type ("hubs", "export") is a plain word.
  return [...names].filter((n) => n.includes('_'));
}

/**
 * What is wrong with `text`, or null.
 * @param {string} text
 * @param {{enums: string[], requests: string[]}} bad
 */
function fault(text, bad) {
  if (/os error \d+/i.test(text)) return 'an OS error number';
  for (const e of bad.enums) if (new RegExp(`\\b${e}\\b`).test(text)) return `the Rust name ${e}`;
  for (const r of bad.requests) if (new RegExp(`\\b${r}\\b`).test(text)) return `the request name ${r}`;
  return null;
}

/** Every script and page of the extension (the generated pkg/ aside). */
async function extensionFiles() {
  /** @type {string[]} */
  const out = [];
  for (const dir of [EXTENSION, path.join(EXTENSION, 'lib')]) {
    for (const f of await readdir(dir)) if (/\.(js|html)$/.test(f)) out.push(path.join(dir, f));
  }
  return out;
}

/**
 * The sentences a script can show: string and template literal parts with a space, outside
 * `console.*` calls and import/export specifiers.
 * @param {string} file
 * @param {string} src
 */
function scriptSentences(file, src) {
  const ast = acorn.parse(src, { ecmaVersion: 'latest', sourceType: 'module', locations: true });
  /** @type {{text: string, line: number}[]} */
  const out = [];
  /** @param {any} n @param {boolean} skip */
  const visit = (n, skip) => {
    if (!n || typeof n.type !== 'string') return;
    if (/^(Import|Export(All|Named))Declaration$/.test(n.type) && n.source) return visitAll(n.declaration, skip);
    const consoleCall = n.type === 'CallExpression' && n.callee?.type === 'MemberExpression' &&
      n.callee.object?.name === 'console';
    const here = skip || consoleCall;
    let text = null;
    if (n.type === 'Literal' && typeof n.value === 'string') text = n.value;
    if (n.type === 'TemplateElement') text = n.value.cooked ?? n.value.raw;
    if (text !== null && /\s/.test(text.trim()) && !here) out.push({ text, line: n.loc.start.line });
    for (const [k, v] of Object.entries(n)) {
      if (k === 'loc' || k === 'parent') continue;
      if (Array.isArray(v)) for (const c of v) visit(c, here);
      else if (v && typeof v === 'object') visit(v, here);
    }
  };
  /** @param {any} n @param {boolean} skip */
  const visitAll = (n, skip) => visit(n, skip);
  visit(ast, false);
  return out;
}

/**
 * The text and the shown attributes of a page.
 * @param {string} src
 */
function pageSentences(src) {
  const body = src.replace(/<script[\s\S]*?<\/script>/gi, ' ');
  const texts = body.replace(/<[^>]*>/g, '\n').split('\n').map((s) => s.trim()).filter(Boolean);
  const attrs = [...body.matchAll(/\b(?:title|placeholder|aria-label|alt)="([^"]*)"/g)].map((m) => m[1]);
  return [...texts, ...attrs].map((text) => ({ text, line: 0 }));
}

test('(s1) no sentence of the extension holds a Rust enum name, an OS error number or a request name', async () => {
  const enums = (await Promise.all(RUST_ENUMS.map(([f, n]) => variants(f, n)))).flat();
  const requests = await requestNames();
  assert.ok(enums.includes('PageBudget') && enums.includes('FrontierEmpty'), `${enums}`);
  assert.ok(requests.includes('start_crawl') && requests.includes('queue_links'), `${requests}`);
  // The check itself catches what #29 saw.
  for (const seen of ['last crawl stopped: PageBudget', 'host: no seeds (start_crawl)',
    'tcp connect error: Connection refused (os error 111)']) {
    assert.ok(fault(seen, { enums, requests }), seen);
  }
  /** @type {string[]} */
  const found = [];
  let checked = 0;
  for (const file of await extensionFiles()) {
    const src = await readFile(file, 'utf8');
    const sentences = file.endsWith('.html') ? pageSentences(src) : scriptSentences(file, src);
    for (const s of sentences) {
      checked++;
      const why = fault(s.text, { enums, requests });
      if (why) found.push(`${path.relative(REPO, file)}:${s.line}: ${why}: ${JSON.stringify(s.text)}`);
    }
  }
  console.log(`# ${checked} sentences of the extension checked`);
  assert.ok(checked > 200, `${checked} sentences: the walk found the extension's text`);
  assert.deepEqual(found, []);
});

/**
 * The real host, spoken to as the browser does (32-bit length, JSON).
 * @param {string} home
 */
function startHost(home) {
  const child = spawn(FORAGER, ['native'], { env: { ...process.env, FORAGER_HOME: home },
    stdio: ['pipe', 'pipe', 'ignore'] });
  let buf = Buffer.alloc(0);
  /** @type {((v: any) => void)[]} */
  const waiting = [];
  /** @type {any[]} */
  const frames = [];
  child.stdout.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32LE(0)) {
      const n = buf.readUInt32LE(0);
      const msg = JSON.parse(buf.subarray(4, 4 + n).toString('utf8'));
      buf = buf.subarray(4 + n);
      if (msg.type !== 'reply') continue;
      const w = waiting.shift();
      if (w) w(msg); else frames.push(msg);
    }
  });
  /** @param {any} msg @returns {Promise<any>} */
  const request = (msg) => {
    const body = Buffer.from(JSON.stringify(msg));
    const len = Buffer.alloc(4);
    len.writeUInt32LE(body.length);
    child.stdin.write(Buffer.concat([len, body]));
    return frames.length ? Promise.resolve(frames.shift()) : new Promise((r) => waiting.push(r));
  };
  return { child, request };
}

test('(s2) the host\'s refusals of what a user can do are sentences without internal names', async () => {
  assert.ok(existsSync(FORAGER), `the native CLI is missing (${FORAGER})`);
  const enums = (await Promise.all(RUST_ENUMS.map(([f, n]) => variants(f, n)))).flat();
  const requests = await requestNames();
  const home = await mkdtemp(path.join(os.tmpdir(), 'forager-strings-'));
  const host = startHost(home);
  try {
    let id = 0;
    const ask = (/** @type {any} */ m) => host.request({ id: ++id, ...m });
    assert.equal((await ask({ type: 'hello', version: 1 })).ok, true);
    const topics = (await ask({ type: 'topics' })).result.topics;
    const net = topics.find((/** @type {any} */ t) => t.path === '/Computing/Networking');
    await ask({ type: 'set_good', topic: net.id, good: true });
    // What a user can cause from the popup and the side panel, each refused.
    const refused = [
      // Before any crawl: nothing to download yet.
      { type: 'get_apprentice', offset: 0 },
      { type: 'export', what: 'warc', offset: 0 },
      { type: 'start_crawl', seeds: [] },
      { type: 'start_crawl', seeds: ['file:///etc/passwd'] },
      { type: 'start_crawl', seeds: ['http://a.test/'], pages: 0 },
      { type: 'start_crawl', seeds: ['http://a.test/'], delay: 1000 },
      { type: 'start_crawl', seeds: ['http://a.test/'], proxy: 'http://example.com:3128' },
      { type: 'queue_links', urls: [] },
      { type: 'queue_links', urls: ['javascript:alert(1)'] },
      { type: 'add_topic', parent: 0, name: '' },
      { type: 'add_topic', parent: 0, name: 'Computing' },
      { type: 'rename_topic', topic: net.id, name: 'a/b' },
      { type: 'delete_topic', topic: 0 },
      { type: 'mark_not_relevant', url: 'http://never-fetched.test/' },
    ];
    /** @type {string[]} */
    const found = [];
    for (const r of refused) {
      const reply = await ask(r);
      assert.equal(reply.ok, false, `${JSON.stringify(r)} was refused: ${JSON.stringify(reply)}`);
      const why = fault(reply.error, { enums, requests });
      if (why) found.push(`${r.type}: ${why}: ${reply.error}`);
      console.log(`# ${r.type}: ${reply.error}`);
    }
    assert.deepEqual(found, []);
  } finally {
    host.child.kill();
    await rm(home, { recursive: true, force: true });
  }
});
