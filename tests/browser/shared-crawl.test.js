// @ts-check
// The browser on a crawl shared through PostgreSQL (#26), in headless Chromium with the real
// native host and a real server (scripts/pg-cluster.sh; its URL in FORAGER_TEST_PG): the popup's
// "Shared crawl" moves the host's crawl to a database on the server; a crawl started from the
// browser and a `forager worker` (another machine's) crawl it in turn; the side panel says the
// crawl is shared and shows its progress and hubs, every worker's; a mark and a stop act on it;
// an empty "Shared crawl" goes back to this computer. Screenshots go to out/shared-crawl/.
//
// Environment: FORAGER_BIN, CHROMIUM_PATH (helpers/paths.js), FORAGER_TEST_PG.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { handle as handleIn, openExtensionPage, startHostSession, stopHostSession, workerState }
  from './helpers/chromium.js';
import { tasks } from './helpers/foldoc.js';
import { waitFor } from './helpers/harness.js';
import { CHROMIUM, EXTENSION, FORAGER, OUT } from './helpers/paths.js';

const run = promisify(execFile);
const SERVER = process.env.FORAGER_TEST_PG ?? '';
const CI = !!process.env.CI && process.env.CI !== 'false';
const GOOD = '/Science/Astronomy';
const SHOTS = path.join(OUT, 'shared-crawl');
const DB = `shared_crawl_${process.pid}`;

/** The test database's URL on the server. */
function dbUrl() {
  const u = new URL(SERVER);
  u.pathname = `/${DB}`;
  return u.toString();
}

/** @param {string} sql runs on the server's own database */
async function admin(sql) {
  await run('psql', [SERVER, '-v', 'ON_ERROR_STOP=1', '-qc', sql]);
}

/** @type {import('./helpers/chromium.js').HostSession | null} */
let session = null;
/** @type {string[]} */
const pageErrors = [];
const S = () => /** @type {import('./helpers/chromium.js').HostSession} */ (session);
/** @param {any} msg */
const handle = (msg) => handleIn(S(), msg);

before(async () => {
  if (!SERVER) {
    if (CI) throw new Error('FORAGER_TEST_PG is not set: scripts/pg-cluster.sh start prints a server URL');
    return;
  }
  await admin(`CREATE DATABASE ${DB}`);
  session = await startHostSession({ bin: FORAGER, chromium: CHROMIUM, extension: EXTENSION, name: 'shared',
    web: (tmp) => path.join(tmp, 'web'),
    prepare: (forager, tmp) => forager(['gen-web', '--out', path.join(tmp, 'web')]) });
}, { timeout: 120_000 });

after(async () => {
  await stopHostSession(session);
  if (SERVER) await admin(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`).catch(() => {});
});

test('the browser crawls a shared crawl with a worker elsewhere; the side panel shows it; marks and stop act on it', {
  skip: SERVER ? false : 'FORAGER_TEST_PG is not set (export FORAGER_TEST_PG=$(scripts/pg-cluster.sh start))',
}, async () => {
  await mkdir(SHOTS, { recursive: true });
  const popup = await openExtensionPage(S().ctx, S().extId, 'popup.html', { width: 420, height: 800 }, pageErrors);
  assert.equal(await popup.getAttribute('#shared-db-note', 'data-shared'), 'false');
  // Not a server: refused in words, nothing changes.
  await popup.click('#advanced summary');
  await popup.fill('#shared-db', 'http://db.test/crawl');
  await popup.click('#use-db');
  await waitFor('the refusal', async () => /postgres/.test(await popup.textContent('#notice-text') ?? ''), 10_000);
  assert.equal(await popup.getAttribute('#shared-db-note', 'data-shared'), 'false');
  await popup.fill('#shared-db', dbUrl());
  await popup.click('#use-db');
  await waitFor('the shared crawl chosen', async () =>
    await popup.getAttribute('#shared-db-note', 'data-shared') === 'true', 15_000);
  assert.match(await popup.textContent('#shared-db-note') ?? '', new RegExp(DB));
  await popup.screenshot({ path: path.join(SHOTS, 'popup-shared-crawl.png') });
  assert.ok(((await workerState(S())).database ?? '').endsWith(`/${DB}`));

  const topic = (await workerState(S())).model.topics.find((/** @type {any} */ t) => t.path === GOOD);
  await handle({ type: 'set_good', topic: topic.id, good: true });
  const task = (await tasks(path.join(S().tmp, 'web'))).find((t) => t.name === 'astronomy');
  assert.ok(task);
  const panel = await openExtensionPage(S().ctx, S().extId, 'sidepanel.html', { width: 380, height: 1000 }, pageErrors);
  await handle({ type: 'start_crawl', seeds: task.seeds, pages: 250, proxy: S().proxy, delay: 0 });
  await waitFor('the browser crawl to stop', async () => (await workerState(S())).crawl?.state === 'idle'
    && (await workerState(S())).crawl?.fetched >= 250, 90_000);
  // Another machine's worker crawls on the crawl the browser started. (Started while the
  // browser's crawl holds every host, a worker finds nothing to lease and ends: helper S's
  // part of #26, "a crawl waits for others' leases".)
  const worker = spawn(FORAGER, ['worker', '--db', dbUrl(), '--pages', '500', '--proxy', S().proxy, '--delay', '0'],
    { stdio: 'ignore' });
  assert.equal(await new Promise((resolve) => worker.on('exit', resolve)), 0, 'the worker ends well');
  // The shared crawl's counters are every worker's: 500 pages, in the panel too.
  const status = await handle({ type: 'status' });
  assert.equal(status.status.fetched, 500, JSON.stringify(status));
  await panel.reload();
  await panel.waitForSelector('body[data-ready="true"]');
  assert.equal(await panel.isVisible('#database'), true);
  assert.match(await panel.textContent('#database') ?? '', /Shared crawl on postgres:\/\//);
  await waitFor('500 fetched in the panel', async () =>
    Number(await panel.getAttribute('#fetched', 'data-value')) === 500, 15_000);
  await waitFor('hubs in the side panel', async () => (await panel.locator('#hubs li').count()) > 0, 30_000);
  await panel.locator('#crawl').screenshot({ path: path.join(SHOTS, 'sidepanel-shared-crawl.png') });
  await panel.locator('#distiller').screenshot({ path: path.join(SHOTS, 'sidepanel-shared-hubs.png') });

  // A mark reads the page's text from the server; a stop ends the browser's crawl.
  const hub = await panel.getAttribute('#hubs li:first-child', 'data-url');
  assert.ok(hub);
  const marked = await handle({ type: 'mark_url_not_relevant', url: hub });
  assert.ok(JSON.stringify(marked).includes(hub), JSON.stringify(marked));
  await handle({ type: 'start_crawl', seeds: [], pages: 100000, proxy: S().proxy, delay: 0.2 });
  await waitFor('the crawl running', async () => (await workerState(S())).crawl?.state === 'running', 15_000);
  await handle({ type: 'stop_crawl' });
  await waitFor('the crawl stopped', async () => (await workerState(S())).crawl?.state === 'idle', 30_000);
  const after = (await handle({ type: 'status' })).status.fetched;
  assert.ok(after >= 500 && after < 100500, `${after}`);

  // Back to this computer: an empty crawl there; the shared one stays on the server.
  await popup.reload();
  await popup.waitForSelector('body[data-ready="true"]');
  await popup.click('#advanced summary');
  await popup.fill('#shared-db', '');
  await popup.click('#use-db');
  await waitFor('back to this computer', async () =>
    await popup.getAttribute('#shared-db-note', 'data-shared') === 'false', 15_000);
  assert.equal((await handle({ type: 'status' })).status.fetched, 0);
  const { stdout } = await S().forager(['status', dbUrl(), '--json']);
  assert.equal(JSON.parse(stdout).fetched, after);
  assert.deepEqual(pageErrors, []);
});
