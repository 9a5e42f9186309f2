// @ts-check
// A new user's first hour (#29) in headless Chromium with the real native host and its starter
// taxonomy: Start with a good topic and no seed says what to do within a second and crawls no
// made-up demo host; a seed whose host does not exist ends the crawl within 10 s and the side
// panel names the host and the reason, and so does a seed that is a 404; seeds whose hosts refuse
// connections or never answer end the crawl as soon as they have failed once (no backoff when
// nothing was ever fetched), naming host and reason, the technical detail under a "Details"
// disclosure opened by keyboard; a long unbroken topic
// name does not make the popup scroll sideways; screenshots of the popup and the side panel at
// 400x600 and 360x800, light and dark, go to docs/first-hour/.
//
// Environment: FORAGER_BIN, CHROMIUM_PATH (helpers/paths.js).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { handle as handleIn, openExtensionPage, startHostSession, stopHostSession,
  workerState } from './helpers/chromium.js';
import { ensureFoldoc } from './helpers/foldoc.js';
import { startSaysNothingToCrawl, waitFor } from './helpers/harness.js';
import { CHROMIUM, EXTENSION, FORAGER, OUT, TARBALL, TARGET } from './helpers/paths.js';

/** Where the screenshots of the changed popup and side panel go (kept in the repository). */
const SHOTS = path.join(OUT, 'first-hour'); // copies kept in docs/first-hour/
const FETCH_TIMEOUT = 5; // seconds: the host's fetch timeout in this suite

const S = {
  /** @type {import('./helpers/chromium.js').HostSession | null} */
  session: null,
  web: '',
  /** @type {string[]} */
  pageErrors: [],
  /** @type {import('playwright-core').Page | null} */
  popup: null,
  /** @type {import('playwright-core').Page | null} */
  panel: null,
  /** @type {(net.Server | http.Server)[]} loopback servers of the tests */
  servers: [],
};

/** @param {any} msg */
const handle = (msg) => handleIn(/** @type {any} */ (S.session), msg);
const state = () => workerState(/** @type {any} */ (S.session));
/** @param {string} file @param {{width: number, height: number}} size */
const open = (file, size) => {
  const s = /** @type {import('./helpers/chromium.js').HostSession} */ (S.session);
  return openExtensionPage(s.ctx, s.extId, file, size, S.pageErrors);
};

/** Rows in the host's crawl database (0 when it has none). */
async function docRows() {
  const s = /** @type {import('./helpers/chromium.js').HostSession} */ (S.session);
  const db = path.join(s.home, 'crawl.db');
  if (!existsSync(db)) return 0;
  const { stdout } = await s.forager(['sql', db, 'SELECT count(*) FROM doc']);
  return Number(stdout.trim().split('\n').pop());
}

/**
 * Starts a crawl from the popup with `seeds` (and `proxy`, '' for none) and waits for it to end;
 * returns the seconds from the click to the side panel's "Last crawl" line.
 * @param {string} seeds
 * @param {string} proxy
 */
async function crawlFromPopup(seeds, proxy) {
  const [popup, panel] = [/** @type {any} */ (S.popup), /** @type {any} */ (S.panel)];
  await popup.fill('#seeds', seeds);
  await popup.evaluate(() => { /** @type {HTMLDetailsElement} */ (document.getElementById('advanced')).open = true; });
  await popup.fill('#proxy', proxy);
  const before = await panel.textContent('#last-stop');
  const t0 = Date.now();
  await popup.click('#start-crawl');
  await panel.waitForFunction((was) => {
    const t = document.getElementById('last-stop')?.textContent ?? '';
    return t !== was && /^Last crawl: /.test(t) &&
      document.getElementById('crawl-state')?.dataset.state === 'idle';
  }, before, { timeout: 30_000 });
  return (Date.now() - t0) / 1000;
}

before(async () => {
  S.web = await ensureFoldoc(TARGET, TARBALL);
  await mkdir(SHOTS, { recursive: true });
  S.session = await startHostSession({ bin: FORAGER, chromium: CHROMIUM, extension: EXTENSION,
    name: 'first-hour', web: S.web, starter: true,
    // The host's fetch timeout, short so the silent seed below times out in seconds, not 30.
    env: { FORAGER_FETCH_TIMEOUT: String(FETCH_TIMEOUT) } });
  S.popup = await open('popup.html', { width: 400, height: 760 });
  S.panel = await open('sidepanel.html', { width: 380, height: 900 });
}, { timeout: 120_000 });

after(() => {
  for (const srv of S.servers) srv.close();
  return stopHostSession(S.session);
});

/**
 * A loopback server on `ip` (port chosen by the system), closed after the suite: `answer` true
 * serves one page without links to every request; false accepts connections and never answers.
 * @param {string} ip
 * @param {boolean} answer
 * @returns {Promise<number>} its port
 */
async function loopback(ip, answer) {
  /** @type {net.Socket[]} */
  const held = [];
  const srv = answer
    ? http.createServer((_q, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!DOCTYPE html><title>One page</title><p>Networking notes, nothing to follow.</p>');
    })
    : net.createServer((c) => { held.push(c); });
  srv.on('close', () => held.forEach((c) => c.destroy()));
  await new Promise((resolve) => srv.listen(0, ip, () => resolve(undefined)));
  S.servers.push(srv);
  return /** @type {import('node:net').AddressInfo} */ (srv.address()).port;
}

/** A loopback port nothing listens on (connections are refused). */
async function refusedPort() {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const a = /** @type {import('node:net').AddressInfo} */ (srv.address());
      srv.close(() => resolve(a.port));
    });
  });
}

/**
 * Starts a crawl from the popup with local `seeds` (Start twice: the popup asks first about
 * addresses on this computer) and no proxy.
 * @param {string} seeds
 */
async function startLocal(seeds) {
  const popup = /** @type {import('playwright-core').Page} */ (S.popup);
  await popup.fill('#seeds', seeds);
  await popup.evaluate(() => { /** @type {HTMLDetailsElement} */ (document.getElementById('advanced')).open = true; });
  await popup.fill('#proxy', '');
  await popup.click('#start-crawl');
  await popup.waitForFunction(() => /on this computer or your local network\. Press Start again/
    .test(document.getElementById('notice-text')?.textContent ?? ''), undefined, { timeout: 5000 });
  assert.equal((await state()).crawl?.state, 'idle', 'not started before the user says so');
  await popup.click('#start-crawl');
}

test('(f1) starter taxonomy, a topic ticked good, no seeds: Start says what to do within 1 s, no crawl', async (t) => {
  const popup = /** @type {import('playwright-core').Page} */ (S.popup);
  const topics = (await state()).model.topics;
  const net = topics.find((/** @type {any} */ x) => x.path === '/Computing/Networking');
  assert.ok(net, `the starter taxonomy has /Computing/Networking: ${topics.map((/** @type {any} */ x) => x.path)}`);
  assert.ok(net.subtree_examples > 0, 'with its demo examples');
  // The guide says what comes first.
  assert.match(await popup.textContent('#guide') ?? '', /Next: Choose your topic/);
  const box = popup.locator('li[data-path="/Computing/Networking"] > .row input.good');
  const t0 = Date.now();
  await box.check();
  await popup.waitForSelector('li[data-path="/Computing/Networking"].is-good', { timeout: 10_000 });
  t.diagnostic(`ticking good showed in ${Date.now() - t0} ms`);
  await popup.fill('#seeds', '');
  const said = await startSaysNothingToCrawl(popup, t);
  assert.doesNotMatch(said, /start_crawl|host:/, 'no request name');
  await new Promise((r) => setTimeout(r, 1500));
  const s = await state();
  assert.equal(s.crawl?.state, 'idle', 'no crawl started');
  assert.equal(await docRows(), 0, 'no demo host was put in a frontier');
  await popup.click('#notice-dismiss');
});

test('(f2) a seed whose host does not exist ends within 10 s; the side panel names the host and why', async (t) => {
  const panel = /** @type {import('playwright-core').Page} */ (S.panel);
  const seed = 'http://bandwith-archive.test/archive/index.html';
  const secs = await crawlFromPopup(seed, '');
  t.diagnostic(`unknown host: ended in ${secs.toFixed(1)} s`);
  assert.ok(secs <= 10, `ended within 10 s (${secs} s)`);
  const last = await panel.textContent('#last-stop') ?? '';
  assert.match(last, /Nothing could be fetched/, last);
  assert.match(last, /bandwith-archive\.test: unknown host/, last);
  // The URL as the crawl keeps it (canonical: index.html dropped).
  assert.ok(last.includes('http://bandwith-archive.test/archive/'), `the URL is named: ${last}`);
  const li = panel.locator('#failing li[data-host="bandwith-archive.test"]');
  assert.match(await li.textContent() ?? '', /unknown host/);
  assert.equal(await li.getAttribute('data-kind'), 'unknown-host', 'the technical kind is one hover away');
  assert.doesNotMatch(last, /FrontierEmpty|PageBudget|robots-unavailable|os error/);
});

test('(f3) a 404 seed ends within 10 s and the side panel says the page was not found', async (t) => {
  const panel = /** @type {import('playwright-core').Page} */ (S.panel);
  const s = /** @type {import('./helpers/chromium.js').HostSession} */ (S.session);
  const seed = 'http://16000-hub.test/no-such-page.html';
  const secs = await crawlFromPopup(seed, s.proxy);
  t.diagnostic(`404 seed: ended in ${secs.toFixed(1)} s`);
  assert.ok(secs <= 10, `ended within 10 s (${secs} s)`);
  const last = await panel.textContent('#last-stop') ?? '';
  assert.match(last, /16000-hub\.test: page not found \(404\)/, last);
  assert.ok(last.includes(seed), last);
  assert.match(await panel.textContent('#failing li[data-host="16000-hub.test"]') ?? '', /page not found \(404\)/);
});

test('(f3b) a refused host next to one that answers: the side panel says what the crawl waits for, and "Give up on these" ends it', async (t) => {
  const panel = /** @type {import('playwright-core').Page} */ (S.panel);
  // The crawl reached the web (one page fetched), so the refused host may come back: it waits.
  const answers = await loopback('127.0.0.3', true);
  const port = await refusedPort();
  await startLocal(`http://127.0.0.1:${port}/start.html\nhttp://127.0.0.3:${answers}/one.html`);
  await panel.waitForSelector('#alarms li[data-kind="waiting"] button.give-up', { timeout: 20_000 });
  const waiting = await panel.textContent('#alarms li[data-kind="waiting"]') ?? '';
  t.diagnostic(waiting);
  assert.match(waiting, /waiting \d+ s for 1 failing host \(127\.0\.0\.1\)/);
  assert.match(await panel.textContent('#failing li[data-host="127.0.0.1"]') ?? '', /connection was refused/);
  const t0 = Date.now();
  await panel.click('#alarms li[data-kind="waiting"] button.give-up');
  await panel.waitForSelector('#crawl-state[data-state="idle"]', { timeout: 10_000 });
  t.diagnostic(`ended ${Date.now() - t0} ms after "Give up on these"`);
  // A page was fetched, so the stop is a plain sentence; the failing list keeps the host's cause.
  const last = await panel.textContent('#last-stop') ?? '';
  assert.match(last, /^Last crawl: No links were left to follow\./, last);
  assert.match(await panel.textContent('#failing li[data-host="127.0.0.1"]') ?? '', /connection was refused/);
});

test('(f3c) seeds that are refused or never answered end the crawl at once, naming host and reason; "Details" opens by keyboard', async (t) => {
  const panel = /** @type {import('playwright-core').Page} */ (S.panel);
  await handle({ type: 'new_crawl' });
  const before = await panel.textContent('#last-stop');
  const ended = () => panel.waitForFunction((was) => {
    const txt = document.getElementById('last-stop')?.textContent ?? '';
    return txt !== was && /^Last crawl: /.test(txt) && document.getElementById('crawl-state')?.dataset.state === 'idle';
  }, before, { timeout: 60_000 });
  // A refused seed alone: over as soon as the connection is refused (the backoff is 10 s).
  const port = await refusedPort();
  let t0 = Date.now();
  await startLocal(`http://127.0.0.1:${port}/start.html`);
  await ended();
  const refusedSecs = (Date.now() - t0) / 1000;
  t.diagnostic(`refused seed: ended in ${refusedSecs.toFixed(1)} s`);
  assert.ok(refusedSecs < 8, `ended in ${refusedSecs} s, not after a backoff`);
  let last = await panel.textContent('#last-stop') ?? '';
  assert.match(last, /Nothing could be fetched/, last);
  assert.match(last, /127\.0\.0\.1: the connection was refused/, last);
  // With a seed whose host accepts the connection and never answers: over when its request times
  // out (the fetch timeout, FETCH_TIMEOUT s here), not after backoffs of 10 + 20 + 40 s and
  // their timeouts.
  await handle({ type: 'new_crawl' });
  const silent = await loopback('127.0.0.2', false);
  const was = await panel.textContent('#last-stop');
  t0 = Date.now();
  await startLocal(`http://127.0.0.1:${port}/start.html\nhttp://127.0.0.2:${silent}/start.html`);
  await panel.waitForFunction((w) => {
    const txt = document.getElementById('last-stop')?.textContent ?? '';
    return txt !== w && /^Last crawl: /.test(txt) && document.getElementById('crawl-state')?.dataset.state === 'idle';
  }, was, { timeout: 60_000 });
  const secs = (Date.now() - t0) / 1000;
  t.diagnostic(`refused + silent seeds: ended in ${secs.toFixed(1)} s`);
  assert.ok(secs >= FETCH_TIMEOUT - 0.5, `waited out the fetch timeout (${secs} s)`);
  assert.ok(secs < FETCH_TIMEOUT + 12, `ended in ${secs} s, not after a backoff`);
  last = await panel.textContent('#last-stop') ?? '';
  assert.match(last, /127\.0\.0\.1: the connection was refused/, last);
  assert.match(last, /127\.0\.0\.2: it did not answer in time/, last);
  assert.doesNotMatch(last, /FrontierEmpty|os error|timeout\b/);
  // The technical detail is one click away, by keyboard too, and stays open as the panel redraws.
  const li = '#failing li[data-host="127.0.0.2"]';
  assert.equal(await panel.isVisible(`${li} details.tech .tech-text`), false, 'closed at first');
  await panel.focus(`${li} details.tech > summary`);
  await panel.keyboard.press('Enter');
  await panel.waitForSelector(`${li} details.tech[open] .tech-text`, { timeout: 5000 });
  assert.match(await panel.textContent(`${li} details.tech .tech-text`) ?? '', /error kind .*timeout.*URL: http:\/\/127\.0\.0\.2:\d+\/start\.html/s);
  await handle({ type: 'status' });
  await new Promise((r) => setTimeout(r, 700));
  assert.equal(await panel.isVisible(`${li} details.tech .tech-text`), true, 'still open after a redraw');
  await panel.keyboard.press('Enter');
  await panel.waitForSelector(`${li} details.tech:not([open])`, { timeout: 5000 });
  await panel.locator('#failing-box').screenshot({ path: path.join(SHOTS, 'failing-details.png') });
  await panel.keyboard.press('Enter');
  await panel.locator('#failing-box').screenshot({ path: path.join(SHOTS, 'failing-details-open.png') });
});

test('(f4) a long unbroken topic name does not scroll the popup sideways', async () => {
  const popup = /** @type {import('playwright-core').Page} */ (S.popup);
  const name = 'Supercalifragilistic'.repeat(6);
  await popup.click('li[data-path="/Computing"] > .row .name');
  await popup.fill('#topic-name', name);
  await popup.click('#add-topic');
  await popup.waitForSelector(`li[data-path="/Computing/${name}"]`, { timeout: 10_000 });
  const [scroll, client] = await popup.evaluate(() => [document.documentElement.scrollWidth,
    document.documentElement.clientWidth]);
  assert.ok(scroll <= client, `no sideways scroll: ${scroll} px of content in ${client} px`);
  // Nor the taxonomy box: the name wraps inside it.
  const [treeScroll, treeClient] = await popup.evaluate(() => {
    const t = /** @type {HTMLElement} */ (document.getElementById('tree'));
    return [t.scrollWidth, t.clientWidth];
  });
  assert.ok(treeScroll <= treeClient, `the tree does not scroll sideways: ${treeScroll} px in ${treeClient} px`);
});

test('(f5) screenshots of the popup and side panel at 400x600 and 360x800, light and dark', async (t) => {
  const pages = [/** @type {import('playwright-core').Page} */ (S.popup), /** @type {import('playwright-core').Page} */ (S.panel)];
  for (const [w, h] of [[400, 600], [360, 800]]) {
    for (const scheme of /** @type {const} */ (['light', 'dark'])) {
      for (const [i, page] of pages.entries()) {
        await page.setViewportSize({ width: w, height: h });
        await page.emulateMedia({ colorScheme: scheme });
        const [scroll, client] = await page.evaluate(() => [document.documentElement.scrollWidth,
          document.documentElement.clientWidth]);
        assert.ok(scroll <= client, `${i ? 'side panel' : 'popup'} ${w}x${h} ${scheme}: ${scroll} > ${client}`);
        await page.evaluate(() => window.scrollTo(0, 0));
        const file = path.join(SHOTS, `${i ? 'sidepanel' : 'popup'}-${w}x${h}-${scheme}.png`);
        await page.screenshot({ path: file });
        t.diagnostic(file);
      }
    }
  }
  // The red Delete is readable on its button in both schemes (WCAG AA: 4.5).
  const popup = pages[0];
  await popup.setViewportSize({ width: 400, height: 600 });
  for (const scheme of /** @type {const} */ (['light', 'dark'])) {
    await popup.emulateMedia({ colorScheme: scheme });
    const ratio = await popup.evaluate(() => {
      const b = /** @type {HTMLElement} */ (document.getElementById('delete-topic'));
      const rgb = (/** @type {string} */ c) => (c.match(/[\d.]+/g) ?? []).slice(0, 3).map(Number);
      const lum = (/** @type {number[]} */ v) => {
        const [r, g, bl] = v.map((x) => { const c = x / 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; });
        return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
      };
      const st = getComputedStyle(b);
      const [l1, l2] = [lum(rgb(st.color)), lum(rgb(st.backgroundColor))].sort((x, y) => y - x);
      return (l1 + 0.05) / (l2 + 0.05);
    });
    t.diagnostic(`Delete contrast, ${scheme}: ${ratio.toFixed(1)}`);
    assert.ok(ratio >= 4.5, `Delete readable in ${scheme}: contrast ${ratio.toFixed(2)}`);
    await popup.locator('#taxonomy .tools').screenshot({ path: path.join(SHOTS, `popup-tools-${scheme}.png`) });
  }
  assert.deepEqual(S.pageErrors, []);
});
