// @ts-check
/**
 * The side panel: the last classified page (path, relevance, add it as an example, mark its
 * topic good), the best next links of the page being read (lib/links-view.js), the crawl's
 * counters and live relevance plot, top hubs and authorities, alarms.
 */

import { base64ToBytes } from './lib/base64.js';
import { onBroadcast, send } from './lib/messages.js';
import { browseShown, showBestLinks, showBrowse, wireLinks } from './lib/links-view.js';
import { showFailing } from './lib/failing-view.js';
import { RelevancePlot } from './lib/plot.js';
import { refreshSuggestions } from './lib/widen-view.js';
import { searchLive, wireSearch } from './lib/search-view.js';
import { $, act, detailsBox, el, fixed, shortUrl, showHost, showNotice, tabLink, waitingText, wireNoticeDismiss } from './lib/ui.js';

/**
 * @typedef {import('./lib/messages.js').State} State
 * @typedef {import('./lib/messages.js').Classification} Classification
 * @typedef {import('./lib/protocol.js').TopicInfo} TopicInfo
 * @typedef {import('./lib/protocol.js').Status} Status
 * @typedef {import('./lib/protocol.js').Hub} Hub
 */

/** @type {TopicInfo[]} */
let topics = [];
/** @type {Classification | null} */
let classification = null;
let hostConnected = true;
/** @type {Status | null} the crawl as last reported */
let lastStatus = null;
/** The links section is wired at the first state. */
let wired = false;

/** @param {string} url */
const openTab = (url) => { chrome.tabs.create({ url }); };
const plot = new RelevancePlot(/** @type {HTMLCanvasElement} */ ($('plot')), (p) => openTab(p.url));
const topicSelect = /** @type {HTMLSelectElement} */ ($('example-topic'));
/** @param {string} id */
const button = (id) => /** @type {HTMLButtonElement} */ ($(id));

/** @param {Classification | null} c */
function showClassification(c) {
  classification = c;
  $('no-classification').hidden = Boolean(c);
  $('classified').hidden = !c;
  if (!c) return;
  if (wired) showBrowse(browseShown(), c.url);
  const title = $('page-title');
  title.textContent = c.title || c.url;
  title.title = c.url;
  $('best-path').replaceChildren(...c.path.map((s) => el('li', { 'data-topic': s.topic, 'data-p': s.p },
    el('span', { class: 'topic' }, s.topic),
    el('span', { class: 'bar' }, el('span', { style: `width:${(100 * s.p).toFixed(1)}%` })),
    el('span', { class: 'p' }, s.p.toFixed(3)))));
  const rel = $('relevance');
  rel.textContent = fixed(c.relevance, 3);
  rel.dataset.relevance = String(c.relevance);
  const size = c.textBytes < 10240 ? `${c.textBytes} bytes` : `${(c.textBytes / 1024).toFixed(0)} KB`;
  $('classify-info').textContent = `${size} of text classified in ${c.ms.toFixed(1)} ms`;
  $('best-leaf').textContent = c.best_leaf;
  $('none-of-these').hidden = !c.none;
  $('none-detail').textContent = c.none
    ? `(Pr ${fixed(c.background, 3)}; nearest topic ${c.best_leaf})` : '';
  showTopicChoices();
  showMarkButton();
}

function showTopicChoices() {
  const keep = topicSelect.value;
  topicSelect.replaceChildren(...topics.filter((t) => t.id !== t.parent)
    .map((t) => el('option', { value: String(t.id) }, t.path)));
  const best = classification ? topics.find((t) => t.path === classification?.best_leaf) : undefined;
  if (keep && topics.some((t) => String(t.id) === keep)) topicSelect.value = keep;
  else if (best) topicSelect.value = String(best.id);
  $('example-topic-name').textContent = topicSelect.selectedOptions[0]?.textContent ?? '';
  const leaf = topics.find((t) => t.path === classification?.best_leaf);
  $('no-good-hint').hidden = topics.length === 0 || topics.some((t) => t.good);
  button('mark-good').disabled = !leaf || leaf.good;
  button('mark-good').title = leaf?.good ? 'already good' : '';
}

/** @type {Record<string, string>} the monitor's alarm kinds, as people say them */
const ALARM_WORDS = { diffusion: 'Drifting off your topics', stagnation: 'Running out of relevant pages' };

/** @param {Status | null} s */
function showStatus(s) {
  lastStatus = s;
  const state = $('crawl-state');
  // Without the host, a "running" crawl may have died with it: say so until it reconnects.
  const live = s?.state === 'running' || s?.state === 'stopping';
  $('hubs-empty').textContent = live
    ? `Hubs appear at the crawl's next distillation (every ${s?.distill_every ?? '–'} fetched pages).`
    : 'No hubs yet. Start a crawl from the toolbar popup: hubs appear while it runs.';
  const shown = live && !hostConnected ? 'host disconnected' : s?.state;
  state.textContent = shown ?? '–';
  state.dataset.state = shown === 'host disconnected' ? 'disconnected' : (s?.state ?? '');
  state.title = shown === 'host disconnected' ? `last known: ${s?.state}, fetched ${s?.fetched}` : '';
  /** @type {[string, number | undefined, number][]} */
  const counters = [['fetched', s?.fetched, 0], ['frontier', s?.frontier, 0], ['rate', s?.pages_per_sec, 1],
    ['errors', s?.errors, 0]];
  for (const [id, v, digits] of counters) {
    const e = $(id);
    e.textContent = fixed(v, digits);
    e.dataset.value = String(v ?? 0);
  }
  const alarms = Array.isArray(s?.alarms) ? s.alarms : [];
  // The monitor's alarms in words; its statistics (a z score) are one click away.
  const items = alarms.map((a) => typeof a === 'string'
    ? el('li', {}, a)
    : el('li', { 'data-kind': a.kind },
      el('b', {}, `${ALARM_WORDS[a.kind] ?? a.kind}: `), a.detail.replace(/;\s*z = [-\d.]+\s*$/, ''), ' ',
      detailsBox(`alarm:${a.kind}`, 'the monitor\'s alarm ', el('code', {}, a.kind), ': ', a.detail)));
  if (live && s?.paused) {
    items.unshift(el('li', { 'data-kind': 'paused' }, el('b', {}, 'Paused: '),
      `${s.paused}. The crawl retries by itself; no URL loses a try meanwhile.`));
  } else if (live && s?.waiting) {
    const names = (s.failing ?? []).filter((t) => typeof t.retry_in === 'number').map((t) => t.host);
    const giveUp = el('button', { class: 'small-button give-up', title: 'Stop waiting for these hosts: ' +
      'their URLs are given up now (Retry failed in the popup brings them back)' }, 'Give up on these');
    giveUp.addEventListener('click', () => act(giveUp, async () => {
      const r = await send({ type: 'give_up_hosts', hosts: names });
      giveUp.textContent = `gave up on ${r.hosts} host${r.hosts === 1 ? '' : 's'}`;
    }));
    items.unshift(el('li', { 'data-kind': 'waiting' }, el('b', {}, 'Waiting: '),
      `${waitingText(s.waiting)}${names.length ? ` (${names.slice(0, 3).join(', ')}${names.length > 3 ? ', …' : ''})` : ''}; ` +
      'only their URLs are left, and this time is not counted as crawling. ', ...(names.length ? [giveUp] : [])));
  }
  $('alarms').replaceChildren(...items);
  showFailing(/** @type {HTMLDetailsElement} */ ($('failing-box')), s);
}

/**
 * Why the last crawl ended: its reason, or that the host stopped under it.
 * @param {string | null} reason
 * @param {number | null} interrupted pages fetched when the host stopped
 */
function showLastStop(reason, interrupted) {
  $('last-stop').textContent = interrupted !== null
    ? `last crawl interrupted at ${interrupted} pages: the host stopped (Resume in the popup)`
    : reason ? `Last crawl: ${reason}` : '';
}

/**
 * @param {string} id
 * @param {Hub[]} list
 */
function showLinks(id, list) {
  // Scores that show as 0.000 rank nothing.
  const shown = list.filter((h) => h.score >= 0.0005);
  $(`${id}-empty`).hidden = shown.length > 0;
  $(id).replaceChildren(...shown.map((h) => {
    const title = h.title?.trim();
    const link = tabLink(h.url, title || shortUrl(h.url),
      ...(title ? [el('span', { class: 'url' }, shortUrl(h.url))] : []));
    const more = el('button', { class: 'crawl-more small-button',
      title: 'crawl more from here: fetch the links of this page not fetched yet first',
      'aria-label': `crawl more from ${title || shortUrl(h.url)}` }, 'crawl more');
    more.addEventListener('click', () => act(more, async () => {
      const r = await send({ type: 'start_crawl', seeds: [], from: [h.url] });
      showNotice(null);
      // It resumes the whole crawl (to its page budget): say so, and how it ends.
      $('more-note').textContent = r.queued
        ? `${r.queued} link${r.queued === 1 ? '' : 's'} of ${shortUrl(h.url)} queued first; the crawl ` +
          'resumed and goes on from there until its page budget (Stop in the popup ends it)'
        : `${shortUrl(h.url)} has no links left to fetch; the crawl resumed from its frontier ` +
          '(Stop in the popup ends it)';
    }));
    // Why a hub ranks: how many of its fetched out-links lead to relevant pages. (An authority
    // ranks by the links into it, so its own out-links would say nothing of why.)
    const why = id !== 'hubs' || h.fetched_links === undefined ? []
      : [el('span', { class: 'why', title: 'of the links on this page to pages fetched so far, how many lead to relevant pages' },
        `${h.relevant_links}/${h.fetched_links} relevant`)];
    const li = el('li', { 'data-url': h.url }, link, ...why, el('span', { class: 'score' }, h.score.toFixed(3)), more);
    li.append(notRelevantButton(li, h.url, title || shortUrl(h.url)));
    return li;
  }));
}

/**
 * The ✕ of a hub or authority: marks the page not relevant (its stored text becomes an example
 * of "none of your topics"); the row is struck through until the next distillation drops it,
 * and the same button undoes the mark.
 * @param {HTMLElement} li
 * @param {string} url
 * @param {string} name
 */
function notRelevantButton(li, url, name) {
  const b = el('button', { class: 'not-relevant small-button' });
  const show = (/** @type {boolean} */ marked) => {
    li.toggleAttribute('data-marked', marked);
    b.textContent = marked ? 'undo' : '✕';
    b.title = marked
      ? 'Undo: this page is relevant after all'
      : 'Not relevant: this page is about none of my topics (it leaves the hubs at the next distillation)';
    b.setAttribute('aria-label', `${marked ? 'undo not relevant' : 'not relevant'}: ${name}`);
  };
  show(false);
  b.addEventListener('click', () => act(b, async () => {
    const undo = li.hasAttribute('data-marked');
    await send({ type: 'mark_url_not_relevant', url, undo });
    show(!undo);
    $('more-note').textContent = undo ? `${shortUrl(url)}: mark undone`
      : `${shortUrl(url)} marked not relevant: pages like it get low relevance; it leaves the hubs at the next distillation`;
  }));
  return b;
}

/**
 * Says where the crawl lives when it is shared on a server (with workers on other machines).
 * @param {string | null} database
 */
function showDatabase(database) {
  const shared = /^postgres(ql)?:\/\//i.test(database ?? '');
  $('database').hidden = !shared;
  $('database').dataset.shared = String(shared);
  $('database').textContent = shared ? `Shared crawl on ${database}: hubs and counts are every worker's` : '';
}

/** @param {State} s */
function showState(s) {
  showHost(s.host);
  hostConnected = s.host.connected;
  topics = s.model.topics;
  showClassification(s.classification);
  showStatus(s.crawl);
  showDatabase(s.database);
  showLastStop(s.lastStop, s.interrupted);
  plot.setPages(s.pages);
  showLinks('hubs', s.hubs);
  showLinks('authorities', s.authorities);
  showNotice(s.notice);
  if (!wired) {
    wireLinks(s);
    wired = true;
  } else {
    showBestLinks(s.highlight);
  }
  showBrowse(s.browse, s.classification?.url ?? null);
}

topicSelect.addEventListener('change', () => showTopicChoices());
button('add-example').addEventListener('click', () => act(button('add-example'), async () => {
  const r = await send({ type: 'add_classified_example', topic: Number(topicSelect.value) });
  topics = r.topics;
  showTopicChoices();
  showNotice(r.offline ? 'added to the browser copy; the host gets it when it connects'
    : r.moved_from ? `moved: the page was an example of ${r.moved_from} until now` : null);
}));
button('mark-good').addEventListener('click', () => act(button('mark-good'), async () => {
  const leaf = topics.find((t) => t.path === classification?.best_leaf);
  if (!leaf) throw new Error('no such topic');
  const r = await send({ type: 'set_good', topic: leaf.id, good: true });
  topics = r.topics;
  showTopicChoices();
}));
/** Pages marked not relevant from this panel (the classified page's button offers undo). */
const markedHere = new Set();

/** The classified page's "Not relevant" button, or its undo when this panel marked it. */
function showMarkButton() {
  const marked = classification !== null && markedHere.has(classification.url);
  const b = button('mark-not-relevant');
  b.textContent = marked ? 'Undo not relevant' : 'Not relevant';
  b.dataset.marked = String(marked);
}

button('mark-not-relevant').addEventListener('click', () => act(button('mark-not-relevant'), async () => {
  const url = classification?.url;
  if (url && markedHere.has(url)) {
    const r = await send({ type: 'mark_url_not_relevant', url, undo: true });
    topics = r.topics;
    markedHere.delete(url);
    showNotice(null);
  } else {
    const r = await send({ type: 'mark_classified_not_relevant' });
    topics = r.topics;
    if (url) markedHere.add(url);
    showNotice(r.offline ? 'marked in the browser copy; the host gets it when it connects' : null);
  }
  showTopicChoices();
  showMarkButton();
}));
button('classify-current').addEventListener('click', () => act(button('classify-current'), async () => {
  showClassification(await send({ type: 'classify_tab' }));
}));

// Take-away results: the host writes them, the page saves them (or shows the report).
for (const b of /** @type {NodeListOf<HTMLButtonElement>} */ (document.querySelectorAll('#exports [data-what]'))) {
  b.addEventListener('click', () => act(b, async () => {
    const what = /** @type {any} */ (b.dataset.what);
    const format = /** @type {'csv' | 'jsonl'} */ (b.dataset.format);
    const text = /** @type {string} */ (await send({ type: 'export', what, format }));
    save(new Blob([text], { type: format === 'csv' ? 'text/csv' : 'application/x-ndjson' }), `forager-${what}.${format}`);
  }));
}
button('export-warc').addEventListener('click', () => act(button('export-warc'), async () => {
  const data = base64ToBytes(/** @type {string} */ (await send({ type: 'export', what: 'warc' })));
  save(new Blob([/** @type {Uint8Array<ArrayBuffer>} */ (data)], { type: 'application/warc' }), 'forager-crawl.warc.gz');
}));

/**
 * Saves `blob` as a download named `name`.
 * @param {Blob} blob
 * @param {string} name
 */
function save(blob, name) {
  const a = el('a', { href: URL.createObjectURL(blob), download: name });
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
}
button('open-report').addEventListener('click', () => act(button('open-report'), async () => {
  const html = /** @type {string} */ (await send({ type: 'export', what: 'report' }));
  const url = URL.createObjectURL(new Blob([html], { type: 'text/html' }));
  await chrome.tabs.create({ url });
}));

onBroadcast((b) => {
  switch (b.type) {
    case 'host_state':
      showHost(b.host);
      if (b.interrupted !== null) showLastStop(null, b.interrupted);
      hostConnected = b.host.connected;
      showStatus(b.crawl ?? lastStatus);
      break;
    case 'classified': showClassification(b.classification); break;
    case 'best_links': showBestLinks(b.highlight); break;
    case 'topics_changed':
      topics = b.topics;
      showTopicChoices();
      refreshSuggestions().catch(() => {});
      break;
    case 'notice': showNotice(b.notice); break;
    case 'host_event': {
      const e = b.event;
      if (e.type === 'progress') showStatus(e.status);
      else if (e.type === 'pages') {
        plot.addPages(e.pages);
        searchLive();
      }
      else if (e.type === 'hubs') {
        showLinks('hubs', e.hubs);
        showLinks('authorities', e.authorities);
        refreshSuggestions().catch(() => {});
      } else if (e.type === 'crawl_stopped') {
        refreshSuggestions().catch(() => {});
        showStatus(e.status);
        showLastStop(e.message ?? e.reason, null);
      }
      break;
    }
    default: break;
  }
});

/** Re-reads everything (on load and after the host reconnects, when the plot must be redrawn). */
async function refresh() {
  showState(await send({ type: 'get_state' }));
  await refreshSuggestions();
  await wireSearch().catch(() => {});
  document.body.dataset.ready = 'true';
}

onBroadcast((b) => { if (b.type === 'host_state' && b.host.connected) refresh().catch(() => {}); });
wireNoticeDismiss((text) => send({ type: 'dismiss_notice', text }));
act(null, refresh);
