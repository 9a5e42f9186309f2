// @ts-check
// Searching the crawl and what is new (#30) in headless Firefox (Debian's firefox-esr, driven
// by puppeteer-core over WebDriver BiDi) with the real native host, on the generated web:
// (fs1) typing in the sidebar page during a running crawl finds pages the crawl fetched after it
// started, and arrows select; (fs2) marking a new page seen makes the "new since you last
// looked" count drop, and "mark all seen" empties it.
//
// Set-up as firefox.test.js: the host installed for Firefox into a fresh HOME, the extension as
// a temporary add-on with its UUID pinned, extension pages reached from a loopback launch pad
// (a copy of extension/ whose pages are web-accessible to it; the code under test is the same).
//
// Environment: FORAGER_BIN, FIREFOX_PATH (default /usr/bin/firefox-esr).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import puppeteer from 'puppeteer-core';
import { tasks } from './helpers/foldoc.js';
import { startServeWeb, waitFor } from './helpers/harness.js';
import { EXTENSION, FORAGER } from './helpers/paths.js';
import { hostPids } from './helpers/procs.js';

const run = promisify(execFile);

const FIREFOX = process.env.FIREFOX_PATH || '/usr/bin/firefox-esr';
const GOOD = '/Science/Astronomy';
const UUID = '3c1e2d4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';

const S = {
  tmp: '',
  home: '',
  ffHome: '',
  web: '',
  /** @type {import('node:child_process').ChildProcess | null} */
  server: null,
  proxy: '',
  /** @type {http.Server | null} */
  pad: null,
  padUrl: '',
  /** @type {import('puppeteer-core').Browser | null} */
  browser: null,
  /** @type {import('puppeteer-core').Page | null} */
  panel: null,
};

/** @param {string[]} args */
async function forager(args) {
  try {
    return await run(FORAGER, args, { maxBuffer: 1 << 26, env: { ...process.env, FORAGER_HOME: S.home } });
  } catch (e) {
    const err = /** @type {any} */ (e);
    throw new Error(`forager ${args.slice(0, 3).join(' ')} failed (${err.code}):\n${err.stderr || err.message}`);
  }
}

/** The sidebar page, stepped into from the launch pad; resolves when it showed its state. */
async function openPanel() {
  assert.ok(S.browser);
  const page = await S.browser.newPage();
  await page.setViewport({ width: 380, height: 900 });
  await page.goto(S.padUrl);
  await page.evaluate((u) => { location.href = u; }, `moz-extension://${UUID}/sidepanel.html`);
  await waitFor('the sidebar page to be ready', () => page.evaluate(() =>
    location.protocol === 'moz-extension:' && document.body?.dataset.ready === 'true'), 20_000);
  return page;
}

/**
 * A request to the background (`globalThis.forager.handle`, as the pages send them).
 * @param {any} msg
 */
async function handle(msg) {
  assert.ok(S.panel);
  return S.panel.evaluate(async (m) => {
    const bg = /** @type {any} */ (await chrome.runtime.getBackgroundPage());
    return JSON.parse(JSON.stringify((await bg.forager.handle(m)) ?? null));
  }, msg);
}

/** @returns {Promise<any>} */
async function state() {
  return handle({ type: 'get_state' });
}

before(async () => {
  assert.ok(existsSync(FORAGER), `the native CLI is missing (${FORAGER})`);
  assert.ok(existsSync(FIREFOX), `Firefox not found at ${FIREFOX}`);
  for (const f of ['pkg/forager_classifier.js', 'pkg/forager_classifier_bg.wasm']) {
    assert.ok(existsSync(path.join(EXTENSION, f)), `extension/${f} is missing (scripts/build-wasm.sh builds pkg/)`);
  }
  S.tmp = await mkdtemp(path.join(os.tmpdir(), 'forager-ffs-'));
  S.home = path.join(S.tmp, 'forager');
  S.ffHome = path.join(S.tmp, 'home');
  S.web = path.join(S.tmp, 'web');
  await mkdir(S.home, { recursive: true });
  await mkdir(S.ffHome, { recursive: true });
  await forager(['gen-web', '--out', S.web]);
  await forager(['train', '--web', S.web, '--out', path.join(S.home, 'model.fgm')]);
  await forager(['install', '--browser', 'firefox', '--home', S.ffHome]);
  const { child, port } = await startServeWeb(FORAGER, S.web);
  S.server = child;
  S.proxy = `http://127.0.0.1:${port}`;
  const pad = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!DOCTYPE html><title>launch pad</title>');
  });
  await new Promise((resolve) => pad.listen(0, '127.0.0.1', () => resolve(undefined)));
  S.pad = pad;
  S.padUrl = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (pad.address()).port}/`;
  const ext = path.join(S.tmp, 'extension');
  await cp(EXTENSION, ext, { recursive: true });
  const manifest = JSON.parse(await readFile(path.join(ext, 'manifest.json'), 'utf8'));
  manifest.web_accessible_resources = [{ resources: ['sidepanel.html'], matches: ['http://127.0.0.1/*'] }];
  await writeFile(path.join(ext, 'manifest.json'), JSON.stringify(manifest, null, 2));
  S.browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX,
    headless: true,
    extraPrefsFirefox: {
      'extensions.webextensions.uuids': JSON.stringify({ [manifest.browser_specific_settings.gecko.id]: UUID }),
      'network.proxy.type': 1,
      'network.proxy.http': '127.0.0.1',
      'network.proxy.http_port': port,
      'network.proxy.no_proxies_on': '',
    },
    env: { ...process.env, HOME: S.ffHome, FORAGER_HOME: S.home },
  });
  await S.browser.installExtension(ext);
  S.panel = await openPanel();
  await waitFor('the host and its model', async () => {
    const s = await state();
    return s.host.connected && s.model.source === 'host' ? s : new Error(JSON.stringify(s.host));
  }, 30_000);
}, { timeout: 180_000 });

after(async () => {
  await S.browser?.close().catch(() => {});
  S.pad?.close();
  if (S.server && S.server.exitCode === null) S.server.kill('SIGTERM');
  if (S.home) for (const pid of hostPids(S.home)) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
  if (S.tmp) await rm(S.tmp, { recursive: true, force: true }).catch(() => {});
});

test('(fs1) Firefox: typing in the sidebar during a crawl finds pages fetched since it started', async () => {
  const panel = /** @type {import('puppeteer-core').Page} */ (S.panel);
  const topic = (await state()).model.topics.find((/** @type {any} */ t) => t.path === GOOD);
  await handle({ type: 'set_good', topic: topic.id, good: true });
  const task = (await tasks(S.web)).find((t) => t.name === 'astronomy');
  assert.ok(task);
  await handle({ type: 'start_crawl', seeds: task.seeds, pages: 400, delay: 0.3, proxy: S.proxy });
  const pick = await waitFor('pages with titles fetched', async () => {
    if (!((await state()).crawl?.fetched >= 15)) return new Error('not yet');
    const pages = (await handle({ type: 'recent_pages' })).pages;
    for (const p of pages) {
      const w = (p.title ?? '').split(/[^\p{L}\p{N}]+/u).find((/** @type {string} */ x) => x.length >= 5);
      if (w) return w.toLowerCase();
    }
    return new Error('no title word');
  }, 60_000);
  await panel.click('#search-query');
  await panel.keyboard.type(pick, { delay: 40 });
  await panel.waitForSelector('#search-results li', { timeout: 15_000 });
  assert.equal((await state()).crawl?.state, 'running', 'the crawl still runs');
  const urls = await panel.$$eval('#search-results li', (lis) => lis.map((li) => li.getAttribute('data-url')));
  const fetched = new Set((await handle({ type: 'recent_pages' })).pages.map((/** @type {any} */ p) => p.url));
  assert.ok(urls.length > 0 && urls.every((u) => fetched.has(u)), `results are fetched pages: ${urls}`);
  await panel.keyboard.press('ArrowDown');
  const selected = await panel.$eval('#search-results li[aria-selected="true"]', (li) => li.getAttribute('data-url'));
  assert.equal(selected, urls[0]);
});

test('(fs2) Firefox: marking a new page seen makes the new count drop; mark all seen empties it', async () => {
  await waitFor('the crawl to end', async () => {
    const s = (await state()).crawl?.state;
    if (s === 'running') await handle({ type: 'stop_crawl' });
    return s === 'idle';
  }, 60_000);
  // A new look (BiDi may not reload a moz-extension page: a new one opens).
  await S.panel?.close();
  const panel = await openPanel();
  S.panel = panel;
  const count = () => panel.evaluate(() => Number(document.getElementById('news-count')?.dataset.count));
  const n = await waitFor('a new count', async () => ((await count()) > 0 ? count() : new Error('none')), 15_000);
  await panel.click('#news-list li:first-child button.seen');
  await waitFor('the count to drop by one', async () => (await count()) === n - 1, 10_000);
  await panel.click('#news-mark-all');
  await waitFor('the count to be 0', async () => (await count()) === 0, 10_000);
});
