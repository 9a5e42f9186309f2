// @ts-check
/**
 * What the Chromium suites share: the extension's id, headless Chromium with the extension
 * loaded and a mini-web behind the proxy, its service worker, code run in it, the user's toolbar
 * click, extension pages opened as tabs, and a whole session with the host for a suite.
 *
 * @module chromium
 */

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { startServeWeb, waitFor } from './harness.js';
import { hostPids } from './procs.js';

const run = promisify(execFile);

/**
 * @typedef {import('playwright-core').Page} Page
 * @typedef {import('playwright-core').Worker} Worker
 * @typedef {import('playwright-core').BrowserContext} BrowserContext
 */

/**
 * A runner of the native CLI with FORAGER_HOME=`home`, failing with its stderr.
 * @param {string} bin
 * @param {string} home
 * @returns {(args: string[]) => Promise<{stdout: string, stderr: string}>}
 */
export function cli(bin, home) {
  return async (args) => {
    try {
      return await run(bin, args, { maxBuffer: 1 << 26, env: { ...process.env, FORAGER_HOME: home } });
    } catch (e) {
      const err = /** @type {any} */ (e);
      throw new Error(`forager ${args.slice(0, 3).join(' ')} failed (${err.code}):\n${err.stderr || err.message}`);
    }
  };
}

/**
 * The extension id Chrome derives from the manifest's key (sha256 of the DER key, a-p).
 * @param {string} extension the extension's directory
 */
export async function extensionId(extension) {
  const manifest = JSON.parse(await readFile(path.join(extension, 'manifest.json'), 'utf8'));
  const hex = createHash('sha256').update(Buffer.from(manifest.key, 'base64')).digest('hex').slice(0, 32);
  return [...hex].map((c) => String.fromCharCode(97 + parseInt(c, 16))).join('');
}

/**
 * Chromium with the extension, pages through `proxy`, the host's state in `home`; `env` adds
 * to the environment the browser (and so the native host it starts) runs with.
 * @param {{chromium: string, extension: string, profile: string, home: string, proxy: string,
 *   env?: Record<string, string>}} o
 * @returns {Promise<BrowserContext>}
 */
export function launch(o) {
  return chromium.launchPersistentContext(o.profile, {
    executablePath: o.chromium,
    headless: true,
    args: [`--disable-extensions-except=${o.extension}`, `--load-extension=${o.extension}`, '--no-sandbox',
      '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', `--proxy-server=${o.proxy}`],
    ignoreDefaultArgs: ['--disable-extensions'],
    env: { ...process.env, HOME: o.profile, XDG_CONFIG_HOME: `${o.profile}/.config`,
      XDG_CACHE_HOME: `${o.profile}/.cache`, FORAGER_HOME: o.home, ...o.env },
  });
}

/**
 * The extension's service worker.
 * @param {BrowserContext} ctx
 * @param {string} extId
 * @returns {Promise<Worker>}
 */
export async function extensionWorker(ctx, extId) {
  const isOurs = (/** @type {Worker} */ w) => w.url().startsWith(`chrome-extension://${extId}/`);
  return ctx.serviceWorkers().find(isOurs) ??
    await ctx.waitForEvent('serviceworker', { predicate: isOurs, timeout: 20_000 });
}

/**
 * Runs code in the service worker.
 * @template R, A
 * @param {Worker | null} worker
 * @param {(arg: A) => R | Promise<R>} fn
 * @param {A} [arg]
 * @returns {Promise<R>}
 */
export async function inWorker(worker, fn, arg) {
  assert.ok(worker, 'the service worker is not up (set-up failed)');
  return /** @type {R} */ (await worker.evaluate(/** @type {any} */ (fn), arg));
}

/**
 * The user's toolbar click on a tab: CDP Extensions.triggerAction on the tab target. Tests use
 * `clickToolbarAndWaitForGrant`, which also waits for the grant the click gives (only
 * tools/grant-race.mjs clicks without waiting, to show the race).
 * @param {BrowserContext | null} ctx
 * @param {Page} page
 * @param {string} extId
 */
export async function clickToolbarButton(ctx, page, extId) {
  const browser = ctx?.browser();
  assert.ok(browser, 'no browser object for the persistent context');
  const cdp = await browser.newBrowserCDPSession();
  try {
    const { targetInfos } = await cdp.send('Target.getTargets', { filter: [{ type: 'tab' }] });
    const tabs = targetInfos.filter((t) => t.url === page.url());
    assert.equal(tabs.length, 1, `${tabs.length} tab targets show ${page.url()}: give each tab a URL of its own`);
    const [tab] = tabs;
    await cdp.send('Extensions.triggerAction', { id: extId, targetId: tab.targetId });
  } finally {
    await cdp.detach().catch(() => {});
  }
}

/**
 * What the worker sees of the tab showing `url`: its id once the tab's URL is visible to the
 * extension, and the page's own `location.href` read with `chrome.scripting.executeScript` (the
 * way the extension reads pages), or the browser's refusal (or why the tab is not known).
 * @param {Worker} worker
 * @param {string} url
 * @returns {Promise<{id?: number, read?: string, refused?: string}>}
 */
function readTab(worker, url) {
  return inWorker(worker, async (u) => {
    const shown = (await chrome.tabs.query({})).filter((t) => t.url === u);
    // Two tabs the extension can see on one URL: which one was clicked is not known here.
    if (shown.length > 1) return { refused: `${shown.length} tabs the extension sees show ${u}: give each tab a URL of its own` };
    const tab = shown[0];
    if (tab?.id === undefined) return {};
    try {
      const [r] = await chrome.scripting.executeScript({ target: { tabId: tab.id }, func: () => location.href });
      return { id: tab.id, read: r?.result };
    } catch (e) {
      return { id: tab.id, refused: String(/** @type {any} */ (e)?.message ?? e) };
    }
  }, url);
}

/**
 * The user's toolbar click on `page`, which grants the extension the tab (activeTab), then a wait
 * until that grant is usable: the worker sees the tab's URL (hidden from the extension without a
 * grant) and reads the page itself. The grant reaches the extension a moment after the click
 * returns; a test that read the page at once failed on a loaded machine ("Cannot access contents
 * of the page"). Resolves to the tab's id; says on stdout when a read was refused first.
 * @param {BrowserContext | null} ctx
 * @param {Worker | null} worker the extension's service worker
 * @param {Page} page
 * @param {string} extId
 * @param {number} [ms] how long the grant may take
 * @returns {Promise<number>}
 */
export async function clickToolbarAndWaitForGrant(ctx, worker, page, extId, ms = 10_000) {
  assert.ok(worker, 'the service worker is not up (set-up failed)');
  const url = page.url();
  await clickToolbarButton(ctx, page, extId);
  const clicked = Date.now();
  let refused = 0;
  const id = await waitFor(`the toolbar click to grant the tab ${url}`, async () => {
    const r = await readTab(worker, url);
    if (r.id !== undefined && r.read === url) return r.id;
    if (r.id !== undefined) refused++;
    return new Error(r.refused ?? (r.id === undefined ? 'the tab\'s URL is not visible to the extension' : `read ${r.read}`));
  }, ms);
  if (refused) console.log(`# toolbar grant usable ${Date.now() - clicked} ms after the click returned (${refused} reads refused before)`);
  return /** @type {number} */ (id);
}

/**
 * Opens an extension page as a tab and waits until it showed its first state.
 * @param {BrowserContext | null} ctx
 * @param {string} extId
 * @param {string} file e.g. popup.html
 * @param {{width: number, height: number}} viewport
 * @param {string[]} pageErrors where the page's uncaught errors go
 */
export async function openExtensionPage(ctx, extId, file, viewport, pageErrors) {
  assert.ok(ctx);
  const page = await ctx.newPage();
  page.on('pageerror', (e) => pageErrors.push(`${file}: ${e}`));
  await page.setViewportSize(viewport);
  /** @type {string[]} */
  const consoleLines = [];
  page.on('console', (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
  await page.goto(`chrome-extension://${extId}/${file}`);
  try {
    await page.waitForSelector('body[data-ready="true"]', { timeout: 15_000 });
  } catch (e) {
    // Say why the page never became ready: its console and uncaught errors.
    throw new Error(`${file} never became ready: ${e}\nconsole:\n${consoleLines.join('\n')}` +
      `\npage errors:\n${pageErrors.join('\n')}`);
  }
  return page;
}

/**
 * A Chromium session with the extension and the real native host, for a suite of its own.
 * @typedef {{tmp: string, home: string, extId: string, proxy: string,
 *   server: import('node:child_process').ChildProcess, ctx: BrowserContext, worker: Worker,
 *   forager: (args: string[]) => Promise<{stdout: string, stderr: string}>}} HostSession
 */

/**
 * Starts a fresh profile with the host installed, the mini-web `web` behind the proxy and the
 * model trained on it; `prepare(forager, tmp)` runs first (to write the web, say). Resolves once
 * the worker has the host's model.
 * With `starter`, no model is trained: the host serves its starter taxonomy (a new user's).
 * `env` is passed to the browser and its host (e.g. FORAGER_FETCH_TIMEOUT).
 * @param {{bin: string, chromium: string, extension: string, name: string, web: string | ((tmp: string) => string),
 *   prepare?: (forager: HostSession['forager'], tmp: string) => Promise<unknown>, starter?: boolean,
 *   env?: Record<string, string>}} o
 * @returns {Promise<HostSession>}
 */
export async function startHostSession(o) {
  assert.ok(existsSync(o.bin), `the native CLI is missing (${o.bin})`);
  assert.ok(existsSync(o.chromium), `Chromium not found at ${o.chromium}`);
  const tmp = await mkdtemp(path.join(os.tmpdir(), `forager-${o.name}-`));
  const profile = path.join(tmp, 'profile');
  const home = path.join(profile, 'forager');
  await mkdir(home, { recursive: true });
  const forager = cli(o.bin, home);
  await o.prepare?.(forager, tmp);
  const web = typeof o.web === 'string' ? o.web : o.web(tmp);
  if (!o.starter) await forager(['train', '--web', web, '--out', path.join(home, 'model.fgm')]);
  await forager(['install', '--browser', 'chromium', '--user-data-dir', profile]);
  const extId = await extensionId(o.extension);
  const { child, port } = await startServeWeb(o.bin, web);
  const proxy = `http://127.0.0.1:${port}`;
  const ctx = await launch({ chromium: o.chromium, extension: o.extension, profile, home, proxy, env: o.env });
  const worker = await extensionWorker(ctx, extId);
  const s = { tmp, home, extId, proxy, server: child, ctx, worker, forager };
  await waitFor('the host and its model', async () => {
    const st = await workerState(s);
    return st.host.connected && st.model.source === 'host' ? st : new Error(JSON.stringify(st.host));
  }, 30_000);
  return s;
}

/**
 * Closes the browser, the proxy and any host left, and removes the session's files.
 * @param {HostSession | null} s
 */
export async function stopHostSession(s) {
  if (!s) return;
  await s.ctx.close().catch(() => {});
  if (s.server.exitCode === null) s.server.kill('SIGTERM');
  for (const pid of hostPids(s.home)) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
  await rm(s.tmp, { recursive: true, force: true }).catch(() => {});
}

/**
 * A request to the service worker, as the extension's pages send it.
 * @param {{worker: Worker}} s
 * @param {any} msg
 */
export function handle(s, msg) {
  return inWorker(s.worker, (m) => /** @type {any} */ (globalThis).forager.handle(m), msg);
}

/**
 * The worker's state (`get_state`).
 * @param {{worker: Worker}} s
 * @returns {Promise<any>}
 */
export function workerState(s) {
  return inWorker(s.worker, () => /** @type {any} */ (globalThis).forager.getState());
}
