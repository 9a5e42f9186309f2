// @ts-check
// "Widen your topic?" (#18.3) in headless Chromium with the real native host, on a generated
// web where Biology is planted as Astronomy's natural neighbour (`forager gen-web --neighbour`):
// after a crawl with Astronomy good, the side panel suggests marking Biology good, with the
// census's counts and example pages, and one click makes it good on the host.
//
// Environment: FORAGER_BIN, CHROMIUM_PATH (helpers/paths.js).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { handle as handleIn, inWorker, openExtensionPage, startHostSession, stopHostSession, workerState }
  from './helpers/chromium.js';
import { tasks } from './helpers/foldoc.js';
import { waitFor } from './helpers/harness.js';
import { CHROMIUM, EXTENSION, FORAGER, OUT } from './helpers/paths.js';

const GOOD = '/Science/Astronomy';
const NEIGHBOUR = '/Science/Biology';

/** @type {import('./helpers/chromium.js').HostSession | null} */
let session = null;
/** @type {string[]} */
const pageErrors = [];
const S = () => /** @type {import('./helpers/chromium.js').HostSession} */ (session);
/** @param {any} msg */
const handle = (msg) => handleIn(S(), msg);
/** @returns {Promise<any>} */
const state = () => workerState(S());

before(async () => {
  await mkdir(OUT, { recursive: true });
  session = await startHostSession({ bin: FORAGER, chromium: CHROMIUM, extension: EXTENSION, name: 'widen',
    web: (tmp) => path.join(tmp, 'web'),
    prepare: (forager, tmp) => forager(['gen-web', '--neighbour', '--out', path.join(tmp, 'web')]) });
}, { timeout: 120_000 });

after(() => stopHostSession(session));

test('(y) after a crawl of Astronomy, the side panel suggests its planted neighbour; one click marks it good', async () => {
  const topicId = async (/** @type {string} */ p) =>
    (await state()).model.topics.find((/** @type {any} */ t) => t.path === p);
  await handle({ type: 'set_good', topic: (await topicId(GOOD)).id, good: true });
  const panel = await openExtensionPage(S().ctx, S().extId, 'sidepanel.html', { width: 380, height: 900 }, pageErrors);
  assert.equal(await panel.isHidden('#widen'), true, 'no suggestion before a crawl');
  const task = (await tasks(path.join(S().tmp, 'web'))).find((t) => t.name === 'astronomy');
  assert.ok(task);
  await handle({ type: 'start_crawl', seeds: task.seeds, pages: 400, proxy: S().proxy, delay: 0 });
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
    const topics = await inWorker(S().worker, () => /** @type {any} */ (globalThis).forager.hostRequest('topics'));
    return topics.topics.find((/** @type {any} */ t) => t.path === NEIGHBOUR)?.good === true;
  }, 10_000);
  await panel.waitForSelector(item, { state: 'detached', timeout: 10_000 });
  assert.deepEqual(pageErrors, []);
});
