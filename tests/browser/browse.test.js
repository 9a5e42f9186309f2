// @ts-check
// Browse with Forager (#18) in headless Chromium with the real native host: the promising
// links of a FOLDOC page are scored in WebAssembly with the apprentice of a crawl the host ran,
// marked in the page (no layout shift, removed cleanly) with the native host's own scores, listed
// in the side panel as "best next links" and queued into a running crawl; scoring a 2,000-link
// page is timed; without permission to read pages nothing is classified as the user browses.
//
// Environment: FORAGER_BIN, CHROMIUM_PATH (helpers/paths.js).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { clickToolbarAndWaitForGrant, handle as handleIn, inWorker, openExtensionPage, startHostSession,
  stopHostSession, workerState } from './helpers/chromium.js';
import { ensureFoldoc, labelledNonExamples, tasks } from './helpers/foldoc.js';
import { menuPageBody, pickPage, waitFor } from './helpers/harness.js';
import { CHROMIUM, EXTENSION, FORAGER, OUT, TARBALL, TARGET } from './helpers/paths.js';

const TOPIC = '/Computing/Networking';

const S = {
  /** @type {import('./helpers/chromium.js').HostSession | null} */
  session: null,
  home: '',
  web: '',
  extId: '',
  proxy: '',
  /** @type {import('playwright-core').BrowserContext | null} */
  ctx: null,
  /** @type {import('playwright-core').Worker | null} */
  worker: null,
  /** @type {{url: string, file: string, native: any} | null} */
  page: null,
  /** @type {import('playwright-core').Page | null} */
  tab: null,
  tabId: 0,
  /** @type {string[]} */
  pageErrors: [],
};

/** @param {string[]} args */
const forager = (args) => /** @type {import('./helpers/chromium.js').HostSession} */ (S.session).forager(args);
/** @param {any} msg */
const handle = (msg) => handleIn({ worker: /** @type {any} */ (S.worker) }, msg);
/** @returns {Promise<any>} the worker's state */
const state = () => workerState({ worker: /** @type {any} */ (S.worker) });

/**
 * (status, relevance, fetch_seq) of `url` in the host's crawl database, or null.
 * @param {string} url
 */
async function doc(url) {
  const { stdout } = await forager(['sql', '--json', path.join(S.home, 'crawl.db'),
    `SELECT status, relevance, fetch_seq FROM doc WHERE url = '${url.replaceAll("'", "''")}'`]);
  const rows = stdout.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
  return rows[0] ?? null;
}

/** Every link's box in the page, to see that marking moved nothing. */
function linkBoxes() {
  return [...document.querySelectorAll('a')].map((a) => {
    const r = a.getBoundingClientRect();
    return [r.x, r.y, r.width, r.height].join(',');
  });
}

before(async () => {
  S.web = await ensureFoldoc(TARGET, TARBALL);
  await mkdir(OUT, { recursive: true });
  const session = await startHostSession({ bin: FORAGER, chromium: CHROMIUM, extension: EXTENSION,
    name: 'browse', web: S.web });
  Object.assign(S, { session, home: session.home, extId: session.extId, proxy: session.proxy,
    ctx: session.ctx, worker: session.worker });
  S.page = await pickPage(S.web, TOPIC, forager, path.join(S.home, 'model.fgm'));
}, { timeout: 120_000 });

after(() => stopHostSession(S.session));

test('(w1) before any crawl, links are scored by the words around them, in the page', async () => {
  assert.ok(S.ctx && S.page);
  const s = await state();
  const topic = s.model.topics.find((/** @type {any} */ t) => t.path === TOPIC);
  await handle({ type: 'set_good', topic: topic.id, good: true });
  S.tab = await S.ctx.newPage();
  await S.tab.goto(S.page.url, { waitUntil: 'load' });
  S.tabId = await clickToolbarAndWaitForGrant(S.ctx, S.worker, S.tab, S.extId);
  const h = await handle({ type: 'highlight_links', tabId: S.tabId });
  assert.equal(h.rule, 'context', 'no crawl yet: no apprentice');
  assert.ok(h.marked > 0 && h.marked <= 5, `marked ${h.marked}`);
  assert.equal(await S.tab.evaluate(() => document.querySelectorAll('[data-forager-mark]').length), h.marked);
  await handle({ type: 'clear_highlights', tabId: S.tabId });
});

test('(w2) with the crawl\'s apprentice: marks present, native scores, nothing moves, removed cleanly', async () => {
  assert.ok(S.tab && S.page);
  const task = (await tasks(S.web)).find((t) => t.name === 'networking');
  assert.ok(task);
  await handle({ type: 'start_crawl', seeds: task.seeds, pages: 400, proxy: S.proxy, delay: 0 });
  await waitFor('the crawl to end', async () => {
    const s = await state();
    return s.crawl?.state === 'idle' && s.crawl.fetched >= 400 ? s : new Error(JSON.stringify(s.crawl));
  }, 180_000);
  await inWorker(S.worker, () => /** @type {any} */ (globalThis).forager.highlighter.forget());
  const tab = S.tab;
  const before = await tab.evaluate(() => document.body.outerHTML);
  const boxes = await tab.evaluate(linkBoxes);
  const h = await handle({ type: 'highlight_links', tabId: S.tabId });
  assert.equal(h.rule, 'apprentice', 'the host\'s apprentice scores the links');
  assert.ok(h.instances[0] > 0 && h.instances[1] > 0, `instances ${h.instances}`);
  assert.ok(h.marked >= 1 && h.marked <= 5, `marked ${h.marked}`);
  const marks = await tab.evaluate(() => [...document.querySelectorAll('[data-forager-mark]')]
    .map((a) => ({ rank: a.getAttribute('data-forager-mark'), title: a.getAttribute('title'),
      outline: getComputedStyle(a).outlineStyle, href: /** @type {HTMLAnchorElement} */ (a).href })));
  assert.equal(marks.length, h.marked);
  for (const m of marks) {
    // A topic is named only when it is good (#29): here, the good topic or a topic under it.
    assert.match(m.title ?? '', /^Forager #\d: \d+% likely to lead to (your topic \/Computing\/Networking(\/.+)?|your good topics)$/);
    assert.equal(m.outline, 'solid');
  }
  assert.equal(h.links[0].url, marks.find((m) => m.rank === '1')?.href, 'the best link is marked #1');
  assert.deepEqual(await tab.evaluate(linkBoxes), boxes, 'marking moved no link');
  await tab.screenshot({ path: path.join(OUT, 'highlighted-page.png') });

  // The extension's scores are the host's, for the same page and model.
  const mine = await inWorker(S.worker, (id) => /** @type {any} */ (globalThis).forager.highlighter.score(id), S.tabId);
  const { stdout } = await forager(['links', '--model', path.join(S.home, 'model.fgm'), '--db',
    path.join(S.home, 'crawl.db'), '--url', S.page.url, S.page.file]);
  const native = JSON.parse(stdout);
  assert.equal(mine.page.links.length, native.links.length, 'same links');
  assert.equal(mine.page.leaves.length, native.leaves, 'same DOM leaves');
  native.links.forEach((/** @type {any} */ n, /** @type {number} */ i) => {
    const l = mine.page.links[i];
    assert.deepEqual([l.start, l.end, l.anchor, l.boilerplate], [n.start, n.end, n.anchor, n.boilerplate], `link ${i}`);
    assert.ok(Math.abs(mine.scores[i].priority - n.priority) < 1e-9, `priority of link ${i}`);
    assert.equal(mine.scores[i].rule, 'apprentice');
    assert.equal(mine.scores[i].topic, n.topic, `topic of link ${i}`);
    assert.ok(Math.abs(mine.scores[i].score - n.score) < 1e-9, `link ${i}: ${mine.scores[i].score} vs native ${n.score}`);
  });
  const bytes = await inWorker(S.worker, () => /** @type {any} */ (globalThis).forager.highlighter.apprentice.length);
  console.log(`# apprentice: ${bytes} bytes for ${h.instances[0] + h.instances[1]} links learned; ` +
    `${h.scored} links scored in ${h.ms.toFixed(2)} ms`);
  assert.ok(bytes < 1 << 20, `apprentice bytes ${bytes} under 1 MB`);

  await handle({ type: 'clear_highlights', tabId: S.tabId });
  assert.equal(await tab.evaluate(() => document.body.outerHTML), before, 'the page is as it was');
  assert.equal(await tab.evaluate(() => document.getElementById('forager-link-marks')), null);
});

test('(w2b) parity on sampled FOLDOC pages: the same leaves, links and scores as the host', async () => {
  assert.ok(S.ctx && S.tab);
  const tab = S.tab;
  // Pages of several topics and sites, the first of each topic that has links.
  const sampled = [];
  for (const topic of ['/Computing/Networking', '/Computing/Languages', '/Computing/Hardware',
    '/Computing/Operating_Systems', '/Computing/Security', '/Computing/Databases']) {
    sampled.push(...(await labelledNonExamples(S.web, topic)).slice(3, 4));
  }
  assert.ok(sampled.length >= 5, `${sampled.length} pages`);
  let links = 0;
  for (const p of sampled) {
    await tab.goto(p.url, { waitUntil: 'load' });
    assert.equal(await clickToolbarAndWaitForGrant(S.ctx, S.worker, tab, S.extId), S.tabId);
    const mine = await inWorker(S.worker, (id) => /** @type {any} */ (globalThis).forager.highlighter.score(id), S.tabId);
    const { stdout } = await forager(['links', '--model', path.join(S.home, 'model.fgm'), '--db',
      path.join(S.home, 'crawl.db'), '--url', p.url, p.file]);
    const native = JSON.parse(stdout);
    assert.equal(mine.page.leaves.length, native.leaves, `${p.url}: leaves`);
    assert.equal(mine.page.links.length, native.links.length, `${p.url}: links`);
    native.links.forEach((/** @type {any} */ n, /** @type {number} */ i) => {
      const l = mine.page.links[i];
      const s = mine.scores[i];
      assert.deepEqual([l.start, l.end, l.anchor, l.boilerplate, s.rule, s.topic],
        [n.start, n.end, n.anchor, n.boilerplate, n.rule, n.topic], `${p.url} link ${i}`);
      assert.ok(Math.abs(s.score - n.score) < 1e-9 && Math.abs(s.priority - n.priority) < 1e-9,
        `${p.url} link ${i}: ${s.score} vs native ${n.score}`);
    });
    links += native.links.length;
  }
  console.log(`# parity: ${sampled.length} pages, ${links} links, scores equal to 1e-9`);
  await tab.goto(/** @type {any} */ (S.page).url, { waitUntil: 'load' });
  assert.equal(await clickToolbarAndWaitForGrant(S.ctx, S.worker, tab, S.extId), S.tabId);
});

test('(w2c) best next links after a crawl hold no fetched page unless marked so; queueing a fetched page says so', async () => {
  assert.ok(S.ctx && S.tab);
  const h = await handle({ type: 'highlight_links', tabId: S.tabId });
  assert.ok(h.links.length > 0, 'links listed');
  let fetchedListed = 0;
  for (const l of h.links) {
    const d = await doc(l.url);
    const has = Boolean(d && d.status !== 0);
    if (has) fetchedListed++;
    assert.equal(Boolean(l.fetched), has, `${l.url}: in the crawl ${has}, marked fetched ${Boolean(l.fetched)}`);
  }
  // Marked ones, if any, come after every new one.
  const firstMarked = h.links.findIndex((/** @type {any} */ l) => l.fetched);
  assert.ok(firstMarked === -1 || h.links.slice(firstMarked).every((/** @type {any} */ l) => l.fetched));
  console.log(`# best next links: ${h.links.length} listed, ${fetchedListed} marked already fetched, ` +
    `${h.leftOut ?? 0} fetched left out`);
  // Queueing a page the crawl fetched: nothing queued, and the reply and the panel say why.
  const { stdout } = await forager(['sql', path.join(S.home, 'crawl.db'), 'SELECT url FROM doc WHERE status = 2 LIMIT 1']);
  const fetched = stdout.trim().split('\n').pop() ?? '';
  const r = await handle({ type: 'queue_links', urls: [fetched] });
  assert.equal(r.queued, 0, JSON.stringify(r));
  assert.equal(r.fates[0].fate, 'fetched');
  assert.match(r.fates[0].why, /already fetched/);
  // The panel's queue button on that page (put in the listed links as a stale list would have it).
  await inWorker(S.worker, (u) => /** @type {any} */ (globalThis).forager.highlighter.last.links
    .unshift({ url: u, anchor: 'a fetched page', score: 0.9, topic: '', rule: 'apprentice' }), fetched);
  const panel = await openExtensionPage(S.ctx, S.extId, 'sidepanel.html', { width: 380, height: 900 }, S.pageErrors);
  await panel.click(`#best-links li[data-url="${fetched}"] button.queue`);
  await panel.waitForSelector(`#highlight-info li[data-fate="fetched"]`, { timeout: 10_000 });
  assert.match(await panel.textContent('#highlight-info') ?? '', /Nothing queued.*already fetched/);
  // Widening: after a crawl the panel either suggests a topic or says it looked and found none.
  await panel.waitForSelector('#widen:not([hidden])', { timeout: 10_000 });
  const suggested = await panel.locator('#suggestions li').count();
  const note = await panel.textContent('#widen-note') ?? '';
  console.log(`# widen: ${suggested} suggestions; ${note}`);
  assert.ok(suggested > 0 || /^Looked at the \d+ pages your good pages lead to/.test(note), note);
  await panel.close();
});

test('(w2d) best next links on a page with a 20-link menu bar list the article\'s links first', async (t) => {
  assert.ok(S.ctx && S.page);
  const tab = await S.ctx.newPage();
  try {
    // A URL of its own (the FOLDOC page is open in another tab too).
    const url = `${S.page.url}#menu-bar`;
    await tab.goto(url, { waitUntil: 'load' });
    await tab.evaluate((body) => { document.body.innerHTML = body; }, menuPageBody());
    // The user's click on the toolbar button grants the extension this tab.
    const tabId = await clickToolbarAndWaitForGrant(S.ctx, S.worker, tab, S.extId);
    const h = await handle({ type: 'highlight_links', tabId });
    const kinds = h.links.map((/** @type {any} */ l) => (new URL(l.url).pathname.startsWith('/entry-') ? 'entry' : 'menu'));
    // How the scores alone would have ranked them (the menu weighs as much as the crawl's rule says).
    const { page, scores } = await inWorker(S.worker, (id) => /** @type {any} */ (globalThis).forager.highlighter.score(id), tabId);
    const pri = (/** @type {string} */ kind) => page.links.map((/** @type {any} */ l, /** @type {number} */ i) =>
      [new URL(l.href).pathname.startsWith(`/${kind}-`), scores[i].priority]).filter((/** @type {any} */ x) => x[0])
      .map((/** @type {any} */ x) => x[1]);
    const [menu, entry] = [pri('menu'), pri('entry')];
    const above = menu.filter((p) => p > Math.min(...entry)).length;
    t.diagnostic(`rule ${h.rule}: listed ${kinds.join(' ')}; by score alone ${above} of ${menu.length} menu links ` +
      `rank above the weakest article link (menu best ${Math.max(...menu).toFixed(3)}, article ` +
      `${Math.min(...entry).toFixed(3)}..${Math.max(...entry).toFixed(3)})`);
    assert.deepEqual(kinds.slice(0, 6), Array(6).fill('entry'), `the article's links lead: ${kinds}`);
    assert.ok(h.links.slice(6).every((/** @type {any} */ l) => l.menu), 'menu links come after, marked as such');
    const marked = await tab.evaluate(() => [...document.querySelectorAll('[data-forager-mark]')]
      .map((a) => new URL(/** @type {HTMLAnchorElement} */ (a).href).pathname));
    assert.ok(marked.length === 5 && marked.every((m) => m.startsWith('/entry-')), `marks on the article: ${marked}`);
    const panel = await openExtensionPage(S.ctx, S.extId, 'sidepanel.html', { width: 380, height: 900 }, S.pageErrors);
    await panel.waitForSelector('#best-links li[data-menu="true"]');
    for (const scheme of /** @type {const} */ (['light', 'dark'])) {
      await panel.emulateMedia({ colorScheme: scheme });
      await panel.locator('#best-links').screenshot({ path: path.join(OUT, `best-links-menu-${scheme}.png`) });
    }
    await panel.close();
    await handle({ type: 'clear_highlights', tabId });
  } finally {
    await tab.close().catch(() => {});
  }
});

test('(w3) "best next links" in the side panel; one queued is fetched next by the running crawl', async () => {
  assert.ok(S.ctx && S.tab);
  const h = await handle({ type: 'highlight_links', tabId: S.tabId });
  const panel = await openExtensionPage(S.ctx, S.extId, 'sidepanel.html', { width: 380, height: 900 }, S.pageErrors);
  await panel.waitForSelector('#best-links li');
  const listed = await panel.$$eval('#best-links li', (lis) => lis.map((li) => li.getAttribute('data-url')));
  assert.deepEqual(listed, h.links.map((/** @type {any} */ l) => l.url));
  assert.match(await panel.textContent('#highlight-info') ?? '', /scored by the crawl's apprentice/);
  const unfetched = async () => {
    /** @type {string[]} */
    const left = [];
    for (const url of /** @type {string[]} */ (listed)) {
      const d = await doc(url);
      if (!d || d.status === 0) left.push(url);
    }
    return left;
  };
  assert.ok((await unfetched()).length > 0, `every best next link was fetched already: ${listed}`);
  await handle({ type: 'start_crawl', seeds: [], pages: 5000, proxy: S.proxy, delay: 2 });
  await waitFor('the crawl running', async () => (await state()).crawl?.state === 'running', 20_000);
  const seqBefore = Number((await forager(['sql', path.join(S.home, 'crawl.db'),
    'SELECT max(fetch_seq) FROM doc'])).stdout.trim().split('\n').pop());
  // The running crawl may fetch a link between the look and the click (more likely on a loaded
  // machine): its button then says "not queued", and the next link not fetched yet is queued.
  /** @type {string | undefined} */
  let pick;
  for (const url of await unfetched()) {
    const button = `#best-links li[data-url="${url}"] button.queue`;
    await panel.click(button);
    const fate = await panel.waitForFunction((u) => {
      const info = document.getElementById('highlight-info');
      if (/queued at the head of the running crawl's frontier/.test(info?.textContent ?? '')) return 'queued';
      return info?.querySelector(`li[data-url="${CSS.escape(u)}"]`) ? 'not queued' : null;
    }, url, { timeout: 10_000 }).then((h) => h.jsonValue());
    if (fate === 'queued') { pick = url; break; }
  }
  assert.ok(pick, `the crawl fetched every best next link before one could be queued: ${listed}`);
  await panel.waitForFunction(() => /queued at the head of the running crawl's frontier/
    .test(document.getElementById('highlight-info')?.textContent ?? ''), undefined, { timeout: 10_000 })
    .catch(async (e) => {
      const info = await panel.textContent('#highlight-info');
      throw new Error(`${e.message}; the panel says: ${info}; ${pick}: ${JSON.stringify(await doc(pick ?? ''))}`);
    });
  await panel.screenshot({ path: path.join(OUT, 'best-next-links.png') });
  const fetched = await waitFor(`${pick} fetched by the running crawl`, async () => {
    const d = await doc(/** @type {string} */ (pick));
    return d && d.status !== 0 ? d : null;
  }, 60_000);
  assert.ok(fetched.status === 2 ? fetched.fetch_seq > seqBefore : true, JSON.stringify(fetched));
  assert.equal((await state()).crawl?.state, 'running', 'taken while the crawl ran');
  await handle({ type: 'stop_crawl' });
  await handle({ type: 'clear_highlights', tabId: S.tabId });
  await panel.close();
});

test('(w4) scoring every link of a 2,000-link page in WebAssembly', async () => {
  const r = await inWorker(S.worker, (n) => /** @type {any} */ (globalThis).forager.benchLinks(n), 2000);
  console.log(`# scoreLinks: ${r.links} links (${r.leaves} leaves): median ${r.medianMs.toFixed(2)} ms, ` +
    `worst ${r.maxMs.toFixed(2)} ms`);
  assert.equal(r.scored, 2000, 'one score in [0, 1] per link');
});

test('(w5) without permission to read pages, nothing is classified as the user browses', async () => {
  assert.ok(S.ctx && S.page);
  await handle({ type: 'set_browse', on: true });
  const tabIds = () => inWorker(S.worker, async () => (await chrome.tabs.query({})).map((t) => t.id));
  const before = await tabIds();
  const tab = await S.ctx.newPage();
  await tab.goto(S.page.url, { waitUntil: 'load' });
  // The new tab by its id: its URL is hidden from the extension (no grant), and the page is also
  // open in S.tab, whose URL the extension sees since w1's click.
  const tabId = await waitFor('the new tab\'s id', async () => (await tabIds()).find((id) => !before.includes(id)), 10_000);
  const seen = await inWorker(S.worker, async (id) => (await chrome.tabs.get(id)).url ?? null, tabId);
  assert.equal(seen, null, 'the extension has no access to the new tab');
  await new Promise((r) => setTimeout(r, 1000));
  const [badge, global] = await inWorker(S.worker, async (id) => [await chrome.action.getBadgeText({ tabId: id }),
    await chrome.action.getBadgeText({})], tabId);
  assert.equal(badge, global, 'no permission, no reading: the tab has no figure of its own, only the icon\'s ' +
    'count of new pages');
  await handle({ type: 'set_browse', on: false });
  await tab.close();
  assert.deepEqual(S.pageErrors, []);
});
