// @ts-check
// The core of the extension suite in headless Firefox (Debian's firefox-esr), driven by
// puppeteer-core over WebDriver BiDi, with the real native host.
//
// Set-up: trains a FOLDOC model into a fresh FORAGER_HOME, installs the host manifest for
// Firefox into a fresh HOME (`forager install --browser firefox --home DIR`, so Firefox reads it from
// $HOME/.mozilla/native-messaging-hosts), serves FOLDOC through `forager serve-web` (Firefox
// uses it as its HTTP proxy) and installs extension/ as a temporary add-on.
//
// Extension pages: BiDi may not navigate to moz-extension:// URLs, and extension pages have a
// random UUID. The test pins the UUID (pref extensions.webextensions.uuids) and loads a copy
// of extension/ whose only difference is that popup.html and sidepanel.html are web-accessible
// to loopback pages: a tab goes to a blank loopback page, then sets location to the extension
// page. The code under test is extension/'s, byte for byte.
//
// Scenarios: (n) a new user (the host's starter taxonomy): a topic ticked good and no seed, Start
// says what to do within a second and no crawl of the demo hosts runs; (j) without a host manifest, the popup says how to install one for Firefox and
// what to check; (a) hello with the installed host, (b) classifying a tab in WASM gives the native
// best path, shown in the sidebar page, (c) add it as an example → popup count + 1 and on the
// host, (d) mark a topic good in the popup → good on the host, (e) a crawl started from the
// popup shows counters, plot dots and hubs in the sidebar page, then stops, (f) SIGKILL the
// host mid-crawl: reported, reconnected, resumed, (l) the event page reads fetched HTML with
// its own DOM (Firefox has no offscreen document), (p) the popup opens the sidebar, (w) with a
// crawl running and no extension page open, the event page is left idle past its (shortened)
// idle limit: the crawl goes on and the sidebar follows it.
//
// Environment: FORAGER_BIN, FIREFOX_PATH (default /usr/bin/firefox-esr).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import puppeteer from 'puppeteer-core';
import { ensureFoldoc, labelledNonExamples, tasks } from './helpers/foldoc.js';
import { menuPageBody, pickPage, startSaysNothingToCrawl, startServeWeb, waitFor } from './helpers/harness.js';
import { EXTENSION, FORAGER, OUT, TARBALL, TARGET } from './helpers/paths.js';
import { hostPids } from './helpers/procs.js';

const run = promisify(execFile);

const FIREFOX = process.env.FIREFOX_PATH || '/usr/bin/firefox-esr';
const TOPIC = '/Computing/Networking';
/** The extension's moz-extension:// host, pinned for the test profile. */
const UUID = '6f0a9b4e-0c1d-4e2f-8a3b-9c8d7e6f5a4b';
/** Seconds of idleness after which Firefox unloads the event page, for scenario (w). */
const IDLE_SECONDS = 3;

/**
 * @typedef {import('puppeteer-core').Browser} Browser
 * @typedef {import('puppeteer-core').Page} Page
 */

const S = {
  tmp: '',
  home: '',
  ffHome: '',
  web: '',
  ext: '',
  geckoId: '',
  /** @type {import('node:child_process').ChildProcess | null} */
  server: null,
  proxyPort: 0,
  /** @type {http.Server | null} */
  pad: null,
  padUrl: '',
  /** @type {Browser | null} */
  browser: null,
  /** @type {{url: string, file: string, native: any} | null} */
  page: null,
  /** @type {Page | null} */
  popup: null,
  /** @type {Page | null} */
  panel: null,
};

// ---------------------------------------------------------------------------------------------
// Helpers

/**
 * Runs the native CLI, failing with its stderr.
 * @param {string[]} args
 * @param {Record<string, string>} [env]
 */
async function forager(args, env = {}) {
  try {
    return await run(FORAGER, args, { maxBuffer: 1 << 26, env: { ...process.env, FORAGER_HOME: S.home, ...env } });
  } catch (e) {
    const err = /** @type {any} */ (e);
    throw new Error(`forager ${args.slice(0, 3).join(' ')} failed (${err.code}):\n${err.stderr || err.message}`);
  }
}

/**
 * Opens an extension page in a new tab (through the loopback launch pad) and waits until it
 * showed its first state.
 * @param {string} file e.g. popup.html
 * @param {{width: number, height: number}} viewport
 * @returns {Promise<Page>}
 */
async function openExtensionPage(file, viewport) {
  assert.ok(S.browser);
  const page = await S.browser.newPage();
  await page.setViewport(viewport);
  await page.goto(S.padUrl);
  const url = `moz-extension://${UUID}/${file}`;
  await page.evaluate((u) => { location.href = u; }, url);
  await waitFor(`${file} to be ready`, () => page.evaluate(() =>
    location.protocol === 'moz-extension:' && document.body?.dataset.ready === 'true'), 20_000);
  return page;
}

/**
 * Calls the background's test surface (`globalThis.forager`, as the Chromium suite's
 * `inWorker` does) from an extension page: Firefox's event page is reachable with
 * runtime.getBackgroundPage, which also wakes it when it was unloaded.
 * @param {Page} page an extension page
 * @param {string} what a method of `globalThis.forager`
 * @param {any[]} [args]
 */
async function inBackground(page, what, args = []) {
  return page.evaluate(async (name, a) => {
    const bg = /** @type {any} */ (await chrome.runtime.getBackgroundPage());
    const v = await bg.forager[name](...a);
    return JSON.parse(JSON.stringify(v ?? null));
  }, what, args);
}

/**
 * A request to the host through the background's port.
 * @param {Page} page
 * @param {string} type
 * @param {any} [fields]
 */
async function hostRequest(page, type, fields) {
  return inBackground(page, 'hostRequest', fields === undefined ? [type] : [type, fields]);
}

/**
 * A numeric `data-*` attribute of an element in a page (NaN when missing).
 * @param {Page} page
 * @param {string} selector
 * @param {string} attr
 */
async function numAttr(page, selector, attr) {
  return page.evaluate((s, a) => Number(document.querySelector(s)?.getAttribute(a) ?? NaN), selector, attr);
}

/**
 * The id of the newest tab showing `url` (an older tab on the same page must not be taken for it).
 * @param {Page} page an extension page
 * @param {string} url
 */
async function tabIdOf(page, url) {
  return waitFor(`the tab of ${url}`, () => page.evaluate(async (u) => (await chrome.tabs.query({}))
    .filter((t) => t.url === u).reduce((/** @type {number | undefined} */ m, t) =>
      (m === undefined || (t.id ?? -1) > m ? t.id : m), undefined), url), 10_000);
}

/** Starts `forager serve-web FOLDOC --port 0`: Firefox's proxy. */
async function startProxy() {
  const { child, port } = await startServeWeb(FORAGER, S.web);
  S.server = child;
  S.proxyPort = port;
}

/** A blank loopback page from which tabs step into extension pages. */
async function startLaunchPad() {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!DOCTYPE html><title>launch pad</title>');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const addr = /** @type {import('node:net').AddressInfo} */ (server.address());
  S.pad = server;
  S.padUrl = `http://127.0.0.1:${addr.port}/`;
}

/**
 * extension/ as loaded by the test: a copy whose popup and side panel are web-accessible to
 * loopback pages (the launch pad), nothing else changed.
 * @returns {Promise<string>}
 */
async function extensionForFirefox() {
  const copy = path.join(S.tmp, 'extension');
  await cp(EXTENSION, copy, { recursive: true });
  const file = path.join(copy, 'manifest.json');
  const manifest = JSON.parse(await readFile(file, 'utf8'));
  manifest.web_accessible_resources = [{ resources: ['popup.html', 'sidepanel.html'], matches: ['http://127.0.0.1/*'] }];
  await writeFile(file, JSON.stringify(manifest, null, 2));
  return copy;
}

/**
 * Firefox with the extension, FOLDOC through the proxy, the host's state in S.home.
 * @param {string} [home] the HOME Firefox runs with (where it looks for host manifests)
 * @param {string} [foragerHome] the host's state (another user's: a fresh one)
 */
async function launch(home = S.ffHome, foragerHome = S.home) {
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX,
    headless: true,
    extraPrefsFirefox: {
      'extensions.webextensions.uuids': JSON.stringify({ [S.geckoId]: UUID }),
      // Optional permissions asked for in a user action are granted without a doorhanger.
      'extensions.webextOptionalPermissionPrompts': false,
      'extensions.background.idle.timeout': IDLE_SECONDS * 1000,
      'network.proxy.type': 1,
      'network.proxy.http': '127.0.0.1',
      'network.proxy.http_port': S.proxyPort,
      'network.proxy.no_proxies_on': '',
    },
    env: { ...process.env, HOME: home, FORAGER_HOME: foragerHome },
  });
  await browser.installExtension(S.ext);
  return browser;
}

// ---------------------------------------------------------------------------------------------
// Set-up and tear-down

before(async () => {
  for (const f of ['pkg/forager_classifier.js', 'pkg/forager_classifier_bg.wasm', 'manifest.json']) {
    assert.ok(existsSync(path.join(EXTENSION, f)), `extension/${f} is missing (scripts/build-wasm.sh builds pkg/)`);
  }
  assert.ok(existsSync(FORAGER), `the native CLI is missing (${FORAGER})`);
  assert.ok(existsSync(FIREFOX), `Firefox not found at ${FIREFOX}`);
  S.web = await ensureFoldoc(TARGET, TARBALL);
  S.tmp = await mkdtemp(path.join(os.tmpdir(), 'forager-ff-'));
  S.home = path.join(S.tmp, 'forager');
  S.ffHome = path.join(S.tmp, 'home');
  await mkdir(S.home, { recursive: true });
  await mkdir(S.ffHome, { recursive: true });
  await mkdir(OUT, { recursive: true });
  S.geckoId = JSON.parse(await readFile(path.join(EXTENSION, 'manifest.json'), 'utf8'))
    .browser_specific_settings.gecko.id;

  await forager(['train', '--web', S.web, '--out', path.join(S.home, 'model.fgm')]);
  S.page = await pickPage(S.web, TOPIC, forager, path.join(S.home, 'model.fgm'));

  // Installed as a user does, into the HOME Firefox will run with.
  const { stdout } = await forager(['install', '--browser', 'firefox', '--home', S.ffHome]);
  const hostManifest = path.join(S.ffHome, '.mozilla', 'native-messaging-hosts', 'org.forager.host.json');
  assert.equal(stdout.trim(), hostManifest, 'install prints the manifest it wrote');
  const hm = JSON.parse(await readFile(hostManifest, 'utf8'));
  assert.deepEqual(hm.allowed_extensions, [S.geckoId], 'host manifest allows our extension by its gecko id');
  assert.equal(hm.allowed_origins, undefined, 'no Chromium origins in a Firefox manifest');

  await startProxy();
  await startLaunchPad();
  S.ext = await extensionForFirefox();
  S.browser = await launch();
}, { timeout: 180_000 });

after(async () => {
  await S.browser?.close().catch(() => {});
  S.pad?.close();
  if (S.server && S.server.exitCode === null) S.server.kill('SIGTERM');
  if (S.home) for (const pid of hostPids(S.home)) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
  if (S.tmp) await rm(S.tmp, { recursive: true, force: true }).catch(() => {});
});

// ---------------------------------------------------------------------------------------------
// Scenarios

test('(a) Firefox: the event page starts and hello succeeds with the host installed for Firefox', async () => {
  S.popup = await openExtensionPage('popup.html', { width: 400, height: 760 });
  const popup = S.popup;
  const state = await waitFor('the host and its model', async () => {
    const s = await popup.evaluate(async () => (await chrome.runtime.sendMessage({ type: 'get_state' })).result);
    return s.host.connected && s.model.source === 'host' ? s : new Error(`host ${JSON.stringify(s.host)}, model ${s.model.source}`);
  }, 30_000);
  assert.match(state.host.host, /^forager /, 'hello names the host');
  assert.ok(state.model.topics.some((/** @type {any} */ t) => t.path === TOPIC), 'FOLDOC topics from the host');
  assert.equal(state.crawl?.state, 'idle');
});

test('(b) Firefox: classifying a tab in WASM gives the native best path; the sidebar page shows it', async () => {
  assert.ok(S.browser && S.page && S.popup);
  // "Allow Forager to read pages", clicked as a user does (an optional permission).
  await S.popup.click('#grant-access');
  await waitFor('the page permission', () => S.popup?.evaluate(() =>
    chrome.permissions.contains({ origins: ['<all_urls>'] })) ?? Promise.resolve(false), 10_000);
  const tab = await S.browser.newPage();
  await tab.goto(S.page.url, { waitUntil: 'load' });
  const popup = S.popup;
  const tabId = await tabIdOf(popup, S.page.url);
  const view = await inBackground(popup, 'classifyTab', [tabId]);
  const native = S.page.native;
  assert.equal(view.best_leaf, native.best_leaf, 'best leaf: Firefox WASM vs native CLI');
  assert.deepEqual(view.path.map((/** @type {any} */ s) => s.topic), native.path.map((/** @type {any} */ s) => s.topic));
  view.path.forEach((/** @type {any} */ s, /** @type {number} */ i) =>
    assert.ok(Math.abs(s.p - native.path[i].p) < 1e-6, `p(${s.topic}) ${s.p} vs native ${native.path[i].p}`));
  assert.ok(Math.abs(view.relevance - native.relevance) < 1e-9, `relevance ${view.relevance} vs ${native.relevance}`);
  S.panel = await openExtensionPage('sidepanel.html', { width: 380, height: 900 });
  const shown = await S.panel.evaluate(() => [...document.querySelectorAll('#best-path li')]
    .map((li) => /** @type {HTMLElement} */ (li).dataset.topic));
  assert.deepEqual(shown, native.path.map((/** @type {any} */ s) => s.topic), 'sidebar path');
  await tab.close();
});

test('(c) Firefox: "Add as example" in the sidebar adds one to the topic count, on the host too', async () => {
  assert.ok(S.panel && S.popup);
  const popup = S.popup;
  const count = `li[data-path="${TOPIC}"] > .row .count`;
  const before = await numAttr(popup, count, 'data-examples');
  assert.ok(Number.isFinite(before), 'the popup shows a count for the topic');
  await S.panel.evaluate((t) => {
    const sel = /** @type {HTMLSelectElement} */ (document.getElementById('example-topic'));
    const opt = [...sel.options].find((o) => o.label === t || o.textContent === t);
    if (!opt) throw new Error(`no option ${t}`);
    sel.value = opt.value;
    sel.dispatchEvent(new Event('change', { bubbles: true }));
  }, TOPIC);
  await S.panel.click('#add-example');
  await waitFor('the popup count + 1', async () => (await numAttr(popup, count, 'data-examples')) === before + 1, 15_000);
  const topics = (await hostRequest(popup, 'topics')).topics;
  assert.equal(topics.find((/** @type {any} */ t) => t.path === TOPIC).examples, before + 1, 'the host has the example');
});

test('(d) Firefox: marking a topic good in the popup makes it good on the host', async () => {
  assert.ok(S.popup);
  const popup = S.popup;
  const box = `li[data-path="${TOPIC}"] > .row input.good`;
  assert.equal(await popup.$eval(box, (b) => /** @type {HTMLInputElement} */ (b).checked), false);
  await popup.click(box);
  await waitFor('the host to report the topic good', async () =>
    (await hostRequest(popup, 'topics')).topics.find((/** @type {any} */ t) => t.path === TOPIC)?.good === true, 10_000);
});

test('(x) Firefox: classifying as you browse, the badge follows the native classifier; off per site', async () => {
  assert.ok(S.browser && S.panel && S.popup && S.page);
  const panel = S.panel;
  const popup = S.popup;
  // Turned on in the sidebar page, as a user does (the page permission is granted by then).
  await panel.click('#browse-on');
  await waitFor('classify-as-you-browse on', () => inBackground(popup, 'getState').then((s) => s.browse.on), 10_000);
  const pages = [S.page, ...(await labelledNonExamples(S.web, '/Computing/Hardware')).slice(0, 1),
    ...(await labelledNonExamples(S.web, '/Computing/Languages')).slice(0, 1)];
  const { stdout } = await forager(['classify', '--model', path.join(S.home, 'model.fgm'), '--json',
    ...pages.map((p) => p.file)]);
  const native = stdout.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
  assert.ok(native.some((n) => n.relevance >= 0.5) && native.some((n) => n.relevance < 0.5),
    `pages on and off the good topic: ${native.map((n) => n.relevance)}`);
  const tab = await S.browser.newPage();
  try {
    /** @param {number} id */
    const badge = (id) => popup.evaluate(async (i) =>
      ({ text: await chrome.action.getBadgeText({ tabId: i }), title: await chrome.action.getTitle({ tabId: i }) }), id);
    for (const [i, p] of pages.entries()) {
      await tab.goto(p.url, { waitUntil: 'load' });
      const id = await tabIdOf(popup, p.url);
      const want = String(Math.round(native[i].relevance * 100));
      // The figure and its tooltip (the tooltip names the native best leaf).
      await waitFor(`the badge of ${p.url} (${want}, ${native[i].best_leaf})`, async () => {
        const b = await badge(id);
        return b.text === want && b.title.includes(native[i].best_leaf) ? b : new Error(JSON.stringify(b));
      }, 15_000);
    }
    // The sidebar offers the last page's one-click actions, and "not on this site".
    await panel.waitForFunction((u) => document.getElementById('page-title')?.getAttribute('title') === u, {},
      pages[pages.length - 1].url);
    await panel.click('#browse-off-site');
    const last = new URL(pages[pages.length - 1].url);
    await waitFor('the site turned off', () => inBackground(popup, 'getState')
      .then((s) => s.browse.offSites.includes(last.origin)), 10_000);
    const sibling = (await readdir(path.join(S.web, 'sites', last.host)))
      .filter((f) => f.endsWith('.html') && `/${f}` !== last.pathname)[0];
    const other = `${last.origin}/${sibling}`;
    await tab.goto(other, { waitUntil: 'load' });
    const id = await tabIdOf(popup, other);
    // No figure of its own: the tab shows the icon's badge (the count of new pages, if any).
    const global = () => popup.evaluate(() => chrome.action.getBadgeText({}));
    await waitFor('no badge on a site turned off', async () => (await badge(id)).text === await global(), 10_000);
    await panel.click('#browse-on');
  } finally {
    // A failure here leaves no tab behind to be found by the next test's URL lookup, nor
    // classification on.
    await tab.close().catch(() => {});
    await inBackground(popup, 'handle', [{ type: 'set_browse', on: false }]).catch(() => {});
  }
});

test('(e) Firefox: a crawl from the popup shows counters, plot dots and hubs in the sidebar page, then stops', async () => {
  assert.ok(S.popup && S.panel);
  const popup = S.popup;
  const panel = S.panel;
  const task = (await tasks(S.web)).find((t) => t.name === 'networking');
  assert.ok(task);
  await popup.evaluate((seeds, proxy) => {
    /** @param {string} id @param {string} v */
    const set = (id, v) => {
      const e = /** @type {HTMLInputElement} */ (document.getElementById(id));
      e.value = v;
      e.dispatchEvent(new Event('input', { bubbles: true }));
    };
    /** @type {HTMLDetailsElement} */ (document.getElementById('advanced')).open = true;
    set('seeds', seeds);
    set('proxy', proxy);
    set('delay', '0');
    set('budget', '100000');
  }, task.seeds.join('\n'), `http://127.0.0.1:${S.proxyPort}`);
  await popup.click('#start-crawl');
  const fetched = () => numAttr(panel, '#fetched', 'data-value');
  const first = await waitFor('fetched > 0 in the sidebar page', async () => (await fetched()) || null, 30_000);
  await waitFor('the fetched counter to rise', async () => (await fetched()) > first, 15_000);
  await waitFor('dots in the plot', async () => (await numAttr(panel, '#plot', 'data-points')) > 0, 15_000);
  await waitFor('hubs in the sidebar page', async () =>
    (await panel.evaluate(() => document.querySelectorAll('#hubs li').length)) > 0, 30_000);
  const hub = await panel.$eval('#hubs li:first-child', (li) => li.getAttribute('data-url'));
  assert.match(hub ?? '', /^http:\/\/[^/]+\.test\//, 'a hub is a FOLDOC URL');
  await panel.screenshot({ path: path.join(OUT, 'firefox-sidebar.png') });
  await popup.screenshot({ path: path.join(OUT, 'firefox-popup.png') });
  await popup.click('#stop-crawl');
  await waitFor('the crawl to stop', async () =>
    (await panel.$eval('#crawl-state', (e) => e.getAttribute('data-state'))) === 'idle', 30_000);
  assert.equal((await hostRequest(popup, 'status')).status.state, 'idle');
});

test('(e2) Firefox: the toolbar icon counts the new relevant pages since the last look; looking clears it', async (t) => {
  assert.ok(S.popup);
  const popup = S.popup;
  const badge = () => popup.evaluate(() => chrome.action.getBadgeText({}));
  const counted = () => popup.evaluate(async () => {
    const bg = /** @type {any} */ (await chrome.runtime.getBackgroundPage());
    return bg.forager.newsBadge.update();
  });
  // The sidebar page was opened before the crawl of (e): its relevant pages are new since then.
  const n = await counted();
  const text = await waitFor('a count on the icon', async () => ((await badge()) || null), 10_000);
  t.diagnostic(`badge "${text}" for ${n} new relevant pages`);
  assert.ok(n > 0, 'the crawl found relevant pages');
  assert.equal(text, n > 999 ? '999+' : String(n));
  // Looking (the sidebar page opened again) shows them there and clears the icon.
  const look = await openExtensionPage('sidepanel.html', { width: 380, height: 900 });
  try {
    await waitFor('the icon cleared', async () => (await badge()) === '', 10_000);
    const shown = await waitFor('the count in the sidebar', () => numAttr(look, '#news-count', 'data-count')
      .then((c) => c > 0 ? c : null), 10_000);
    assert.equal(shown, n, 'the sidebar lists what the icon counted');
  } finally {
    await look.close().catch(() => {});
  }
});

test('(x2) Firefox: highlighting the promising links of a page marks them and removes every trace', async () => {
  assert.ok(S.browser && S.popup && S.page);
  const popup = S.popup;
  const tab = await S.browser.newPage();
  try {
    // A page of the crawled site with links the crawl has not fetched yet (a fast crawl may have
    // fetched every link of the first page: nothing is left to suggest there, rightly).
    const site0 = new URL(S.page.url);
    const pages = [S.page.url, ...(await readdir(path.join(S.web, 'sites', site0.host)))
      .filter((f) => f.endsWith('.html')).slice(0, 12).map((f) => `${site0.origin}/${f}`)];
    /** @type {any} */
    let h = null;
    let tabId = 0;
    let before = '';
    for (const url of pages) {
      await tab.goto(url, { waitUntil: 'load' });
      tabId = await tabIdOf(popup, url);
      before = await tab.evaluate(() => document.body.outerHTML);
      h = await inBackground(popup, 'handle', [{ type: 'highlight_links', tabId }]);
      if (h.marked > 0) break;
      assert.ok(h.links.every((/** @type {any} */ l) => l.fetched), `nothing marked on ${url} though a link is new`);
    }
    assert.equal(h.rule, 'apprentice', 'the crawl of (e) trained the apprentice');
    assert.ok(h.marked >= 1 && h.marked <= 5, `marked ${h.marked}`);
    assert.equal(await tab.evaluate(() => document.querySelectorAll('[data-forager-mark]').length), h.marked);
    await inBackground(popup, 'handle', [{ type: 'clear_highlights', tabId }]);
    assert.equal(await tab.evaluate(() => document.body.outerHTML), before, 'the page is as it was');

    // "On every page of this site", from the sidebar page: the site's next page is highlighted as
    // it loads, another site's is not.
    assert.ok(S.panel);
    const panel = S.panel;
    await inBackground(popup, 'handle', [{ type: 'highlight_links', tabId }]);
    await panel.waitForSelector('#highlight-site', { visible: true });
    await panel.click('#highlight-site');
    const site = new URL(S.page.url);
    await waitFor('the site opted in', () => inBackground(popup, 'getState')
      .then((st) => st.highlightSites.includes(site.origin)), 10_000);
    // The site's next page with a link the crawl has not fetched is highlighted as it loads (a page
    // whose every link was fetched rightly shows no marks: the host's own answer must say so).
    const files = (await readdir(path.join(S.web, 'sites', site.host))).filter((f) => f.endsWith('.html'));
    let markedOnLoad = '';
    for (const f of files.filter((f) => `/${f}` !== site.pathname).slice(0, 12)) {
      const next = `${site.origin}/${f}`;
      await tab.goto(next, { waitUntil: 'load' });
      const marks = () => tab.evaluate(() => document.querySelectorAll('[data-forager-mark]').length > 0);
      if (await waitFor(`marks on ${next} as it loads`, marks, 5_000).then(() => true, () => false)) {
        markedOnLoad = next;
        break;
      }
      const nextId = await tabIdOf(popup, next);
      const asked = await inBackground(popup, 'handle', [{ type: 'highlight_links', tabId: nextId }]);
      assert.equal(asked.marked, 0, `${next} has new links but was not highlighted as it loaded`);
      assert.ok(asked.links.every((/** @type {any} */ l) => l.fetched), `nothing marked on ${next} though a link is new`);
    }
    assert.ok(markedOnLoad, 'some page of the opted-in site was highlighted as it loaded');
    const elsewhere = (await labelledNonExamples(S.web, '/Computing/Languages'))
      .find((p) => new URL(p.url).host !== site.host);
    assert.ok(elsewhere);
    await tab.goto(elsewhere.url, { waitUntil: 'load' });
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(await tab.evaluate(() => document.querySelectorAll('[data-forager-mark]').length), 0,
      'another site is not highlighted');
    await inBackground(popup, 'handle', [{ type: 'set_highlight_site', origin: site.origin, on: false }]);
  } finally {
    // A failure here leaves no tab behind to be found by the next test's URL lookup.
    await tab.close().catch(() => {});
  }
});

test('(x3) Firefox: best next links on a page with a 20-link menu bar list the article\'s links first', async (t) => {
  assert.ok(S.browser && S.popup && S.page);
  const popup = S.popup;
  const tab = await S.browser.newPage();
  try {
    // A FOLDOC page as the crawl of (e) saw it: its links in #nav and #footer are navigation.
    await tab.goto(S.page.url, { waitUntil: 'load' });
    let tabId = await tabIdOf(popup, S.page.url);
    let h = await inBackground(popup, 'handle', [{ type: 'highlight_links', tabId }]);
    const inNav = await tab.evaluate((urls) => urls.map((u) => [...document.querySelectorAll('#nav a, #footer a')]
      .some((a) => /** @type {HTMLAnchorElement} */ (a).href === u)), h.links.map((/** @type {any} */ l) => l.url));
    t.diagnostic(`FOLDOC page, rule ${h.rule}: ${h.links.map((/** @type {any} */ l, /** @type {number} */ i) =>
      `${inNav[i] ? '[nav] ' : ''}${l.anchor} ${l.score.toFixed(2)}`).join(' · ')}`);
    // Among the links the crawl has not fetched (those it has come last, marked so).
    const fresh = inNav.filter((_, i) => !h.links[i].fetched);
    const firstNav = fresh.indexOf(true);
    assert.ok(firstNav === -1 || fresh.slice(firstNav).every(Boolean), 'no site navigation above a content link');
    assert.deepEqual(h.links.map((/** @type {any} */ l) => Boolean(l.menu)), inNav, 'navigation is marked as such');
    await inBackground(popup, 'handle', [{ type: 'clear_highlights', tabId }]);
    // A page whose 20-link bar has no navigation markup.
    await tab.evaluate((body) => { document.body.innerHTML = body; }, menuPageBody());
    tabId = await tabIdOf(popup, S.page.url);
    h = await inBackground(popup, 'handle', [{ type: 'highlight_links', tabId }]);
    const kinds = h.links.map((/** @type {any} */ l) => (new URL(l.url).pathname.startsWith('/entry-') ? 'entry' : 'menu'));
    t.diagnostic(`menu page, rule ${h.rule}: ${h.links.map((/** @type {any} */ l) => `${l.anchor} ${l.score.toFixed(2)}`).join(' · ')}`);
    assert.deepEqual(kinds.slice(0, 6), Array(6).fill('entry'), `the article's links lead: ${kinds}`);
    assert.ok(h.links.slice(6).every((/** @type {any} */ l) => l.menu), 'menu links come after, marked as such');
    const marked = await tab.evaluate(() => [...document.querySelectorAll('[data-forager-mark]')]
      .map((a) => new URL(/** @type {HTMLAnchorElement} */ (a).href).pathname));
    assert.ok(marked.length === 5 && marked.every((m) => m.startsWith('/entry-')), `marks on the article: ${marked}`);
    await inBackground(popup, 'handle', [{ type: 'clear_highlights', tabId }]);
  } finally {
    await tab.close().catch(() => {});
  }
});

test('(p) Firefox: the popup\'s "Open side panel" opens Firefox\'s sidebar', async () => {
  assert.ok(S.popup);
  const popup = S.popup;
  const isOpen = () => popup.evaluate(() => /** @type {any} */ (globalThis).browser.sidebarAction.isOpen({}));
  assert.equal(await isOpen(), false, 'the sidebar starts closed');
  await popup.click('#open-panel');
  await waitFor('the sidebar to open', isOpen, 10_000);
});

test('(l) Firefox: the event page reads fetched HTML with its own DOM, by the visible-text rule', async () => {
  assert.ok(S.popup);
  const html = '<html><head><title>T</title><style>p{}</style></head><body><nav>menu</nav>' +
    '<p>Routers forward packets.</p><script>var x;</script></body></html>';
  const text = await inBackground(S.popup, 'htmlText', [html]);
  assert.match(text, /Routers forward packets\./);
  assert.doesNotMatch(text, /var x|menu/, 'scripts and navigation are not visible text');
});

test('(f) Firefox: killing the host mid-crawl is reported, the extension reconnects, and Resume continues', async () => {
  assert.ok(S.popup && S.panel);
  const popup = S.popup;
  const panel = S.panel;
  const before = await numAttr(panel, '#fetched', 'data-value');
  await popup.click('#start-crawl');
  await waitFor('a running crawl', async () => (await hostRequest(popup, 'status')).status.state === 'running', 20_000);
  await waitFor('the crawl to fetch more', async () => (await numAttr(panel, '#fetched', 'data-value')) > before, 20_000);
  const pids = hostPids(S.home);
  assert.equal(pids.length, 1, `one host process (found ${pids.join(', ') || 'none'})`);
  const killedAt = Date.now();
  process.kill(pids[0], 'SIGKILL');
  for (const page of [panel, popup]) {
    await waitFor('the page to see the disconnection', () => page.evaluate((t) =>
      Number(document.getElementById('host-status')?.dataset.lastDisconnect) >= t, killedAt), 15_000);
  }
  await waitFor('the extension to reconnect', () => panel.evaluate(() =>
    document.getElementById('host-status')?.dataset.connected === 'true'), 40_000);
  const again = hostPids(S.home);
  assert.equal(again.length, 1, 'Firefox started a new host');
  assert.notEqual(again[0], pids[0]);
  await waitFor('the popup to offer Resume', () => popup.evaluate(() =>
    !/** @type {HTMLElement} */ (document.getElementById('interrupted')).hidden), 15_000);
  const m = (await popup.$eval('#interrupted-text', (e) => e.textContent ?? '')).match(/interrupted at (\d+) pages/);
  assert.ok(m, 'the popup says where the crawl was interrupted');
  await popup.click('#resume-crawl');
  await waitFor('the resumed crawl to go past the interruption', async () =>
    (await numAttr(panel, '#fetched', 'data-value')) > Number(m[1]), 30_000);
});

test('(w) Firefox: left idle past the event page\'s idle limit with no extension page open, the crawl and the sidebar go on', async () => {
  assert.ok(S.popup && S.panel && S.browser);
  const popup = S.popup;
  const panel = S.panel;
  // A fresh, polite crawl (1 s between requests to a host) that cannot run out of work while
  // the test waits: FOLDOC is fetched in seconds at full speed.
  await hostRequest(popup, 'stop_crawl');
  await waitFor('the crawl to stop', async () => (await hostRequest(popup, 'status')).status.state === 'idle', 20_000);
  await hostRequest(popup, 'new_crawl');
  const task = (await tasks(S.web)).find((t) => t.name === 'networking');
  assert.ok(task);
  await hostRequest(popup, 'start_crawl', { seeds: task.seeds, proxy: `http://127.0.0.1:${S.proxyPort}`,
    delay: 1, pages: 100000 });
  await waitFor('a running crawl', async () => (await hostRequest(popup, 'status')).status.state === 'running', 20_000);
  // A mark on this instance of the event page: gone if Firefox unloads and reloads it.
  await popup.evaluate(async () => {
    /** @type {any} */ (await chrome.runtime.getBackgroundPage()).foragerTestMark = 'before idle';
  });
  // Close the extension's pages: only the event page is left, and nothing talks to it.
  await popup.close();
  await panel.close();
  S.popup = null;
  S.panel = null;
  const started = Date.now();
  await new Promise((r) => setTimeout(r, (IDLE_SECONDS * 3 + 2) * 1000));
  // The host's crawl kept going while nothing listened (or the event page stayed, held by its port).
  const hostsNow = hostPids(S.home);
  assert.ok(hostsNow.length > 0, 'the host still runs');
  S.panel = await openExtensionPage('sidepanel.html', { width: 380, height: 900 });
  const p2 = S.panel;
  const fetched = () => numAttr(p2, '#fetched', 'data-value');
  const seen = await waitFor('the sidebar page to show the crawl', async () => (await fetched()) || null, 20_000);
  await waitFor('the sidebar page to follow the crawl', async () => (await fetched()) > seen, 20_000);
  assert.equal((await hostRequest(p2, 'status')).status.state, 'running', 'the crawl is running');
  const mark = await p2.evaluate(async () =>
    /** @type {any} */ (await chrome.runtime.getBackgroundPage()).foragerTestMark ?? null);
  console.log(`# event page left idle ${Math.round((Date.now() - started) / 1000)} s: ` +
    `${mark ? 'kept alive (its native port holds it)' : 'unloaded and reloaded'}; the crawl went on`);
  await hostRequest(p2, 'stop_crawl');
});

test('(j) Firefox: with no host manifest the popup says how to install it for Firefox and what to check', async () => {
  const bare = path.join(S.tmp, 'bare-home');
  await mkdir(bare, { recursive: true });
  const second = await launch(bare);
  try {
    const main = S.browser;
    S.browser = second;
    const popup = await openExtensionPage('popup.html', { width: 400, height: 760 });
    S.browser = main;
    const line = await waitFor('the no-host help', () => popup.evaluate(() => {
      const t = document.getElementById('status-line')?.textContent ?? '';
      return /Install it/.test(t) ? t : null;
    }), 20_000);
    assert.match(line, /forager install --browser firefox/);
    assert.match(line, /\.mozilla\/native-messaging-hosts\/org\.forager\.host\.json/);
    assert.ok(line.includes(S.geckoId), `the help names the add-on id to allow: ${line}`);
  } finally {
    await second.close().catch(() => {});
  }
});

test('(n) Firefox: starter taxonomy, a topic ticked good, no seeds: Start says what to do within 1 s, no crawl', async (t) => {
  // A new user: the host installed, no model of their own (the host serves its starter taxonomy).
  const home = path.join(S.tmp, 'new-user-home');
  const state = path.join(S.tmp, 'new-user-forager');
  await mkdir(home, { recursive: true });
  await mkdir(state, { recursive: true });
  await forager(['install', '--browser', 'firefox', '--home', home]);
  const second = await launch(home, state);
  const main = S.browser;
  try {
    S.browser = second;
    const popup = await openExtensionPage('popup.html', { width: 400, height: 760 });
    S.browser = main;
    const box = 'li[data-path="/Computing/Networking"] > .row input.good';
    await waitFor('the starter taxonomy from the host', () => popup.evaluate((b) =>
      /host's model/.test(document.getElementById('model-source')?.textContent ?? '') &&
      document.querySelector(b) !== null, box), 30_000);
    await popup.click(box);
    await popup.waitForSelector('li[data-path="/Computing/Networking"].is-good', { timeout: 10_000 });
    await startSaysNothingToCrawl(popup, t);
    await new Promise((r) => setTimeout(r, 1500));
    const status = await popup.evaluate(() => document.getElementById('status-line')?.textContent ?? '');
    assert.match(status, /^idle/, 'no crawl started');
    const db = path.join(state, 'crawl.db');
    if (existsSync(db)) {
      const { stdout } = await forager(['sql', db, 'SELECT count(*) FROM doc']);
      assert.equal(Number(stdout.trim().split('\n').pop()), 0, 'no demo host was put in a frontier');
    }
  } finally {
    S.browser = main;
    await second.close().catch(() => {});
    for (const pid of hostPids(state)) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
  }
});

test('(v) Firefox: a refused seed ends the crawl at once, naming host and reason; "Details" opens by keyboard', async (t) => {
  // A user of their own (no earlier crawl whose frontier would go on).
  const home = path.join(S.tmp, 'refused-home');
  const state = path.join(S.tmp, 'refused-forager');
  await mkdir(home, { recursive: true });
  await mkdir(state, { recursive: true });
  await forager(['install', '--browser', 'firefox', '--home', home]);
  await cp(path.join(S.home, 'model.fgm'), path.join(state, 'model.fgm'));
  const second = await launch(home, state);
  const main = S.browser;
  try {
    S.browser = second;
    const popup = await openExtensionPage('popup.html', { width: 400, height: 760 });
    const panel = await openExtensionPage('sidepanel.html', { width: 380, height: 900 });
    S.browser = main;
    await waitFor('the host', () => inBackground(popup, 'getState').then((s) => s.host?.connected), 30_000);
    const port = await new Promise((resolve) => {
      const srv = http.createServer().listen(0, '127.0.0.1', () => {
        const a = /** @type {import('node:net').AddressInfo} */ (srv.address());
        srv.close(() => resolve(a.port));
      });
    });
    const seed = `http://127.0.0.1:${port}/start.html`;
    const t0 = Date.now();
    await hostRequest(popup, 'start_crawl', { seeds: [seed], allow_private: true });
    await waitFor('the crawl to end', () => panel.evaluate(() =>
      /^Last crawl: /.test(document.getElementById('last-stop')?.textContent ?? '') &&
      document.getElementById('crawl-state')?.dataset.state === 'idle'), 30_000);
    const secs = (Date.now() - t0) / 1000;
    t.diagnostic(`refused seed: ended in ${secs.toFixed(1)} s`);
    assert.ok(secs < 8, `ended in ${secs} s, not after a backoff`);
    const last = await panel.evaluate(() => document.getElementById('last-stop')?.textContent ?? '');
    assert.match(last, /127\.0\.0\.1: the connection was refused/, last);
    const li = '#failing li[data-host="127.0.0.1"]';
    await panel.waitForSelector(`${li} details.tech > summary`, { visible: true });
    assert.equal(await panel.$eval(`${li} details.tech`, (d) => /** @type {HTMLDetailsElement} */ (d).open), false);
    await panel.focus(`${li} details.tech > summary`);
    await panel.keyboard.press('Enter');
    await panel.waitForSelector(`${li} details.tech[open] .tech-text`, { visible: true, timeout: 5000 });
    const detail = await panel.$eval(`${li} details.tech .tech-text`, (e) => e.textContent ?? '');
    assert.match(detail, /error kind .*connect.*URL: http:\/\/127\.0\.0\.1:\d+\/start\.html/s, detail);
    await panel.screenshot({ path: path.join(OUT, 'firefox-failing-details.png') });
    await panel.keyboard.press('Enter');
    await panel.waitForSelector(`${li} details.tech:not([open])`, { timeout: 5000 });
  } finally {
    S.browser = main;
    await second.close().catch(() => {});
    for (const pid of hostPids(state)) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
  }
});
