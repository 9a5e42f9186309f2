// @ts-check
// Searching the crawl and what is new (#30) in headless Chromium with the real native host, on
// the generated web: (s1) during a running crawl, words typed in the side panel's search box
// bring up pages the crawl fetched after it started (debounced, as one types), arrows select and
// Enter opens the page; screenshots of the search in light and dark go to docs/. (s2) "New
// since you last looked" counts the new relevant pages; marking one seen and then all seen makes
// the count drop, and a reopened panel starts from the last look. (s3) The toolbar icon's badge
// counts the relevant pages a crawl brings while the panel is closed; opening the panel lists
// them and clears the badge.
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
const DOCS = path.join(OUT, 'search'); // copies kept in docs/

/** @type {import('./helpers/chromium.js').HostSession | null} */
let session = null;
/** @type {string[]} */
const pageErrors = [];
const S = () => /** @type {import('./helpers/chromium.js').HostSession} */ (session);
/** @param {any} msg */
const handle = (msg) => handleIn(S(), msg);
/** @returns {Promise<any>} */
const state = () => workerState(S());
/** @type {import('playwright-core').Page | null} */
let panel = null;
const P = () => /** @type {import('playwright-core').Page} */ (panel);

before(async () => {
  session = await startHostSession({ bin: FORAGER, chromium: CHROMIUM, extension: EXTENSION, name: 'search',
    web: (tmp) => path.join(tmp, 'web'),
    prepare: (forager, tmp) => forager(['gen-web', '--out', path.join(tmp, 'web')]) });
}, { timeout: 120_000 });

after(() => stopHostSession(session));

/** A word of a fetched page's title to search for, and that page. */
async function wordOfAFetchedPage() {
  const pages = (await handle({ type: 'recent_pages' })).pages;
  for (const p of pages) {
    const word = (p.title ?? '').split(/[^\p{L}\p{N}]+/u).find((/** @type {string} */ w) => w.length >= 5);
    if (word) return { word: word.toLowerCase(), page: p, fetched: new Set(pages.map((/** @type {any} */ q) => q.url)) };
  }
  return null;
}

test('(s1) during a crawl, typing in the side panel finds pages fetched since it started; arrows and Enter open one', async () => {
  const topic = (await state()).model.topics.find((/** @type {any} */ t) => t.path === GOOD);
  await handle({ type: 'set_good', topic: topic.id, good: true });
  panel = await openExtensionPage(S().ctx, S().extId, 'sidepanel.html', { width: 380, height: 900 }, pageErrors);
  assert.equal(await P().getAttribute('#search-results', 'data-count'), '0');
  const task = (await tasks(path.join(S().tmp, 'web'))).find((t) => t.name === 'astronomy');
  assert.ok(task);
  // A slow crawl (a delay per host), so that it is still running while the user types.
  await handle({ type: 'start_crawl', seeds: task.seeds, pages: 400, proxy: S().proxy, delay: 0.3 });
  const pick = await waitFor('pages with titles fetched', async () => {
    const w = (await state()).crawl?.fetched >= 15 ? await wordOfAFetchedPage() : null;
    return w ?? new Error('not yet');
  }, 60_000);
  // Typed as a user types: a key at a time (results follow, debounced).
  await P().click('#search-query');
  await P().keyboard.type(pick.word, { delay: 40 });
  await P().waitForSelector('#search-results li', { timeout: 15_000 });
  assert.equal((await state()).crawl?.state, 'running', 'the crawl still runs');
  const urls = await P().$$eval('#search-results li', (lis) => lis.map((li) => li.getAttribute('data-url')));
  const fetched = new Set((await handle({ type: 'recent_pages' })).pages.map((/** @type {any} */ p) => p.url));
  assert.ok(urls.length > 0 && urls.every((u) => fetched.has(u)), `results are fetched pages: ${urls}`);
  // The list first answers a prefix typed so far; the whole word's answer follows (debounced).
  const marked = await waitFor('the typed word marked in the results', async () => {
    const m = await P().$$eval('#search-results mark, #search-results .hit-title',
      (es) => es.map((e) => e.textContent?.toLowerCase() ?? ''));
    return m.some((t) => t.includes(pick.word.slice(0, 4))) ? m : new Error(`marked: ${m}`);
  }, 10_000);
  assert.ok(marked.length > 0, `the word is shown: ${marked}`);
  const r = await P().textContent('#search-results li .score');
  assert.match(r ?? '', /^R \d\.\d\d$/);
  // More pages come in: the results follow the crawl without retyping.
  const before = (await state()).crawl?.fetched;
  await waitFor('more pages fetched', async () => (await state()).crawl?.fetched > before + 10, 60_000);
  // Keyboard: ↓ ↓ ↑ selects the first result again; Enter opens it in a tab.
  await P().keyboard.press('ArrowDown');
  await P().keyboard.press('ArrowDown');
  await P().keyboard.press('ArrowUp');
  const selected = await P().getAttribute('#search-results li[aria-selected="true"]', 'data-url');
  const first = await P().getAttribute('#search-results li:first-child', 'data-url');
  assert.equal(selected, first);
  // While a result is selected the list holds still as pages come in, so Enter opens what was chosen.
  const listed = () => P().$$eval('#search-results li', (lis) => lis.map((li) => li.getAttribute('data-url')));
  const held = await listed();
  const since = (await state()).crawl?.fetched;
  await waitFor('more pages fetched while a result is selected', async () =>
    (await state()).crawl?.state !== 'running' || (await state()).crawl?.fetched > since + 10, 60_000);
  await P().waitForTimeout(2500);
  assert.deepEqual(await listed(), held, 'the list held still under the selection');
  assert.equal(await P().getAttribute('#search-results li[aria-selected="true"]', 'data-url'), selected);
  const opened = S().ctx.waitForEvent('page', { timeout: 10_000 });
  await P().keyboard.press('Enter');
  const tab = await opened;
  await tab.waitForLoadState('domcontentloaded').catch(() => {});
  assert.equal(tab.url(), selected);
  await tab.close();
  // A query with no word is explained, not an error from the database.
  await P().fill('#search-query', '"*( ^');
  await P().waitForFunction(() => (document.getElementById('search-info')?.textContent ?? '').toLowerCase().includes('type a word'));
  await P().fill('#search-query', '');
  await P().click('#search-query');
  await P().keyboard.type(pick.word);
  await P().waitForSelector('#search-results li');
  await P().keyboard.press('ArrowDown');
  await mkdir(DOCS, { recursive: true });
  for (const scheme of /** @type {const} */ (['light', 'dark'])) {
    await P().emulateMedia({ colorScheme: scheme });
    await P().locator('#search').screenshot({ path: path.join(DOCS, `sidepanel-search-${scheme}.png`) });
  }
  await P().emulateMedia({ colorScheme: 'light' });
  assert.deepEqual(pageErrors, []);
});

test('(s2) "new since you last looked" counts new relevant pages; seen and mark all seen make it drop', async () => {
  await waitFor('the crawl to end', async () => {
    const s = (await state()).crawl?.state;
    if (s === 'running') await handle({ type: 'stop_crawl' });
    return s === 'idle';
  }, 60_000);
  // This panel was opened before the crawl: everything the crawl found relevant is new to it.
  await P().reload();
  await P().waitForSelector('body[data-ready="true"]');
  // The reload is a new look: what is new is counted from the first opening.
  const count = async () => Number(await P().getAttribute('#news-count', 'data-count'));
  await waitFor('a new count', async () => (await count()) > 0, 15_000);
  const n = await count();
  const items = await P().$$eval('#news-list li', (lis) => lis.map((li) => li.getAttribute('data-kind')));
  assert.ok(items.length > 0 && items.every((k) => k === 'new'), `${items}`);
  assert.match(await P().title(), new RegExp(`^\\(${n}\\) `), 'the count is in the panel\'s title');
  await P().click('#news-list li:first-child button.seen');
  await P().waitForFunction((k) => document.getElementById('news-count')?.dataset.count === String(k), n - 1);
  assert.equal(await P().locator('#news-list li').count(), Math.min(items.length - 1, n - 1));
  await P().click('#news-mark-all');
  await P().waitForFunction(() => document.getElementById('news-count')?.dataset.count === '0');
  assert.equal(await P().isVisible('#news-empty'), true);
  // Reopened, the panel counts from the last look: nothing new.
  await P().reload();
  await P().waitForSelector('body[data-ready="true"]');
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(await count(), 0);
  assert.deepEqual(pageErrors, []);
});

test('(s3) the toolbar icon counts new relevant pages while the panel is closed; opening it clears the count', async (t) => {
  const badge = () => inWorker(S().worker, () => chrome.action.getBadgeText({}));
  assert.equal(await badge(), '', 'all seen in (s2)');
  await P().close();
  const task = (await tasks(path.join(S().tmp, 'web'))).find((x) => x.name === 'astronomy');
  assert.ok(task);
  const before = (await state()).crawl?.fetched ?? 0;
  await handle({ type: 'start_crawl', seeds: task.seeds, pages: 150, proxy: S().proxy, delay: 0 });
  const during = await waitFor('a count on the icon during the crawl', async () => ((await badge()) || null), 60_000);
  t.diagnostic(`badge "${during}" while the crawl runs`);
  await waitFor('the crawl to end', async () => (await state()).crawl?.state === 'idle', 120_000);
  assert.ok((await state()).crawl?.fetched > before, 'the crawl fetched pages');
  // Its last count, once the crawl stopped.
  const n = await inWorker(S().worker, () => /** @type {any} */ (globalThis).forager.newsBadge.update());
  assert.ok(n > 0);
  assert.equal(await badge(), String(n));
  panel = await openExtensionPage(S().ctx, S().extId, 'sidepanel.html', { width: 380, height: 900 }, pageErrors);
  await waitFor('the icon cleared', async () => (await badge()) === '', 10_000);
  await waitFor(`the panel's count to be the icon's ${n}`, async () =>
    Number(await P().getAttribute('#news-count', 'data-count')) === n, 10_000);
  assert.deepEqual(pageErrors, []);
});
