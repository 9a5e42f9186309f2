// @ts-check
// Hubs on a web where plain HITS collapses (#25), in headless Chromium with the real native
// host: `forager gen-web --community` adds a dominant, tightly-knit community of generic pages
// linked from every page, each listing the same popular pages of every topic. After a crawl of
// Astronomy started through the extension, the side panel lists ten hubs, each with its
// relevant/fetched out-link count, with distinct scores, and at least seven of them are
// relevant pages by the web's ground truth, none of them the community's; plain HITS on a copy
// of the same crawl (the control) is captured by the community: at least three of its pages
// in its top ten, tied at one score (measured 5 and 8 of 10).
//
// Environment: FORAGER_BIN, CHROMIUM_PATH (helpers/paths.js).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { handle as handleIn, openExtensionPage, startHostSession, stopHostSession, workerState }
  from './helpers/chromium.js';
import { tasks } from './helpers/foldoc.js';
import { waitFor } from './helpers/harness.js';
import { CHROMIUM, EXTENSION, FORAGER, OUT } from './helpers/paths.js';

const GOOD = '/Science/Astronomy';

/** @type {import('./helpers/chromium.js').HostSession | null} */
let session = null;
/** @type {string[]} */
const pageErrors = [];
const S = () => /** @type {import('./helpers/chromium.js').HostSession} */ (session);
/** @param {any} msg */
const handle = (msg) => handleIn(S(), msg);

before(async () => {
  await mkdir(OUT, { recursive: true });
  session = await startHostSession({ bin: FORAGER, chromium: CHROMIUM, extension: EXTENSION, name: 'community',
    web: (tmp) => path.join(tmp, 'web'),
    prepare: (forager, tmp) => forager(['gen-web', '--community', '--out', path.join(tmp, 'web')]) });
}, { timeout: 120_000 });

after(() => stopHostSession(session));

test('(c1) on the community web the side panel lists ten good hubs with their relevant-link counts; plain HITS collapses', async (t) => {
  const web = path.join(S().tmp, 'web');
  const topics = (await workerState(S())).model.topics;
  await handle({ type: 'set_good', topic: topics.find((/** @type {any} */ t) => t.path === GOOD).id, good: true });
  const panel = await openExtensionPage(S().ctx, S().extId, 'sidepanel.html', { width: 380, height: 1200 }, pageErrors);
  const task = (await tasks(web)).find((t) => t.name === 'astronomy');
  assert.ok(task);
  await handle({ type: 'start_crawl', seeds: task.seeds, pages: 1000, proxy: S().proxy, delay: 0 });
  await waitFor('the crawl to end', async () => (await workerState(S())).crawl?.state === 'idle', 120_000);
  await waitFor('ten hubs in the side panel', async () => (await panel.locator('#hubs li').count()) >= 10, 30_000);
  const ten = await panel.$$eval('#hubs li', (lis) => lis.slice(0, 10).map((li) => ({
    url: li.getAttribute('data-url') ?? '', why: li.querySelector('.why')?.textContent ?? '',
    score: li.querySelector('.score')?.textContent ?? '' })));
  const labels = new Map((await readFile(path.join(web, 'labels.tsv'), 'utf8')).split('\n')
    .map((l) => /** @type {[string, string]} */ (l.split('\t'))));
  const relevant = (/** @type {string} */ u) => (labels.get(u) ?? '').split('|').some((t) => t === GOOD || t.startsWith(`${GOOD}/`));
  for (const h of ten) {
    const m = /^(\d+)\/(\d+) relevant$/.exec(h.why.trim());
    assert.ok(m && Number(m[1]) <= Number(m[2]) && Number(m[2]) > 0, `each hub says why: ${JSON.stringify(ten)}`);
  }
  const good = ten.filter((h) => relevant(h.url)).length;
  t.diagnostic(`side panel hubs: ${good} of 10 relevant; ${ten.map((h) => `${h.score} ${h.why}`).join(', ')}`);
  assert.ok(good >= 7, `${good} of the ten hubs are relevant pages: ${JSON.stringify(ten)}`);
  assert.ok(ten.every((h) => !/^http:\/\/lib-/.test(h.url)), `no community page is a hub: ${JSON.stringify(ten)}`);
  assert.ok(new Set(ten.map((h) => h.score)).size >= 5, `distinct hub scores: ${JSON.stringify(ten)}`);
  await (await panel.$('#distiller'))?.screenshot({ path: path.join(OUT, 'community-hubs.png') });
  // The control: plain HITS on a copy of this crawl's database collapses onto the community.
  const copy = path.join(S().tmp, 'copy');
  await mkdir(copy, { recursive: true });
  for (const f of ['crawl.db', 'crawl.db-wal']) {
    if (existsSync(path.join(S().home, f))) await copyFile(path.join(S().home, f), path.join(copy, f));
  }
  const { stdout } = await S().forager(['distill', path.join(copy, 'crawl.db'), '--method', 'hits', '--json', '--top', '10']);
  const hitsTop = /** @type {{url: string, score: number}[]} */ (JSON.parse(stdout).hubs);
  const captured = hitsTop.filter((h) => /^http:\/\/lib-/.test(h.url));
  t.diagnostic(`plain HITS on the same crawl: ${captured.length} community pages in its top 10, ` +
    `${new Set(captured.map((h) => h.score.toFixed(6))).size} distinct scores among them`);
  assert.ok(captured.length >= 3 && new Set(captured.map((h) => h.score.toFixed(6))).size === 1,
    `plain HITS is captured by the community (its pages tied in the top 10): ${JSON.stringify(hitsTop)}`);
  assert.deepEqual(pageErrors, []);
});
