// @ts-check
// "Widen your topic?" (#18.3) in headless Chromium with the real native host, on a generated
// web where Biology is planted as Astronomy's natural neighbour (`forager gen-web --neighbour`):
// after a crawl with Astronomy good, the side panel suggests marking Biology good, with the
// census's counts and example pages, and one click makes it good on the host.
//
// Environment: FORAGER_BIN, CHROMIUM_PATH as in extension.test.js.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cli, extensionId, extensionWorker, inWorker, launch, openExtensionPage } from './helpers/chromium.js';
import { tasks } from './helpers/foldoc.js';
import { startServeWeb, waitFor } from './helpers/harness.js';
import { hostPids } from './helpers/procs.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..', '..');
const EXTENSION = path.join(REPO, 'extension');
const OUT = path.join(HERE, 'out');
const FORAGER = process.env.FORAGER_BIN || path.join(REPO, 'target', 'release', 'forager');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const GOOD = '/Science/Astronomy';
const NEIGHBOUR = '/Science/Biology';

const S = {
  tmp: '',
  home: '',
  web: '',
  extId: '',
  proxy: '',
  /** @type {import('node:child_process').ChildProcess | null} */
  server: null,
  /** @type {import('playwright-core').BrowserContext | null} */
  ctx: null,
  /** @type {import('playwright-core').Worker | null} */
  worker: null,
  /** @type {string[]} */
  pageErrors: [],
};

/** @param {string[]} args */
const forager = (args) => cli(FORAGER, S.home)(args);
/** @param {any} msg */
const handle = (msg) => inWorker(S.worker, (m) => /** @type {any} */ (globalThis).forager.handle(m), msg);
/** @returns {Promise<any>} */
const state = () => inWorker(S.worker, () => /** @type {any} */ (globalThis).forager.getState());

before(async () => {
  assert.ok(existsSync(FORAGER), `the native CLI is missing (${FORAGER})`);
  assert.ok(existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM}`);
  S.tmp = await mkdtemp(path.join(os.tmpdir(), 'forager-widen-'));
  const profile = path.join(S.tmp, 'profile');
  S.home = path.join(profile, 'forager');
  S.web = path.join(S.tmp, 'web');
  await mkdir(S.home, { recursive: true });
  await mkdir(OUT, { recursive: true });
  S.extId = await extensionId(EXTENSION);
  await forager(['gen-web', '--neighbour', '--out', S.web]);
  await forager(['train', '--web', S.web, '--out', path.join(S.home, 'model.fgm')]);
  await forager(['install', '--browser', 'chromium', '--user-data-dir', profile]);
  const { child, port } = await startServeWeb(FORAGER, S.web);
  S.server = child;
  S.proxy = `http://127.0.0.1:${port}`;
  S.ctx = await launch({ chromium: CHROMIUM, extension: EXTENSION, profile, home: S.home, proxy: S.proxy });
  S.worker = await extensionWorker(S.ctx, S.extId);
  await waitFor('the host and its model', async () => {
    const s = await state();
    return s.host.connected && s.model.source === 'host' ? s : new Error(JSON.stringify(s.host));
  }, 30_000);
}, { timeout: 120_000 });

after(async () => {
  await S.ctx?.close().catch(() => {});
  if (S.server && S.server.exitCode === null) S.server.kill('SIGTERM');
  if (S.home) for (const pid of hostPids(S.home)) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
  if (S.tmp) await rm(S.tmp, { recursive: true, force: true }).catch(() => {});
});

test('(y) after a crawl of Astronomy, the side panel suggests its planted neighbour; one click marks it good', async () => {
  const topicId = async (/** @type {string} */ p) =>
    (await state()).model.topics.find((/** @type {any} */ t) => t.path === p);
  await handle({ type: 'set_good', topic: (await topicId(GOOD)).id, good: true });
  const panel = await openExtensionPage(S.ctx, S.extId, 'sidepanel.html', { width: 380, height: 900 }, S.pageErrors);
  assert.equal(await panel.isHidden('#widen'), true, 'no suggestion before a crawl');
  const task = (await tasks(S.web)).find((t) => t.name === 'astronomy');
  assert.ok(task);
  await handle({ type: 'start_crawl', seeds: task.seeds, pages: 400, proxy: S.proxy, delay: 0 });
  const item = `#suggestions li[data-path="${NEIGHBOUR}"]`;
  await panel.waitForSelector(item, { timeout: 120_000 });
  await waitFor('the crawl to end', async () => (await state()).crawl?.state === 'idle', 60_000);
  const why = await panel.textContent(`${item} .why`) ?? '';
  const m = /^(\d+)% of the (\d+) pages your good pages lead to outside your good topics are classified \/Science\/Biology \((\d+) pages\), a sibling of \/Science\/Astronomy\.$/.exec(why.trim());
  assert.ok(m, `the evidence in words: ${why}`);
  const [pct, of, pages] = [Number(m[1]), Number(m[2]), Number(m[3])];
  assert.ok(pages >= 10 && pct >= 33 && Math.abs(pct - Math.round((100 * pages) / of)) <= 1, why);
  const examples = await panel.$$eval(`${item} .evidence a`, (as) => as.map((a) => a.getAttribute('href')));
  assert.ok(examples.length >= 1 && examples.every((u) => /^http:\/\//.test(u ?? '')), `${examples}`);
  await panel.screenshot({ path: path.join(OUT, 'widen-suggestion.png') });
  await panel.click(`${item} button.mark-good`);
  await waitFor(`${NEIGHBOUR} good on the host`, async () => {
    const topics = await inWorker(S.worker, () => /** @type {any} */ (globalThis).forager.hostRequest('topics'));
    return topics.topics.find((/** @type {any} */ t) => t.path === NEIGHBOUR)?.good === true;
  }, 10_000);
  await panel.waitForSelector(item, { state: 'detached', timeout: 10_000 });
  assert.deepEqual(S.pageErrors, []);
});
