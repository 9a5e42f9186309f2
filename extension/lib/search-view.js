// @ts-check
/**
 * The side panel's search over the current crawl (results as one types, best first by text
 * and relevance; arrows move, Enter opens) and its "New since you last looked": relevant pages
 * first fetched and pages changed on a revisit since the panel was last opened, with a count
 * (also in the panel's title), "seen" per page and "mark all seen".
 *
 * @module search-view
 */

import { send } from './messages.js';
import { SEEN_KEY } from './news-badge.js';
import { $, el, fixed, shortUrl } from './ui.js';

/**
 * @typedef {import('./protocol.js').SearchHit} SearchHit
 * @typedef {import('./protocol.js').NewsItem} NewsItem
 */

/** Milliseconds of quiet typing before the query is sent. */
const DEBOUNCE_MS = 200;
/** The least time between refreshes driven by the crawl's new pages. */
const LIVE_MS = 2000;

/**
 * What was stored at the last look.
 * @returns {Promise<{lastOpened?: number, seenUrls?: string[]}>}
 */
async function seenRecord() {
  return (await chrome.storage.local.get(SEEN_KEY))[SEEN_KEY] ?? {};
}

/** @param {string} url */
const openTab = (url) => { chrome.tabs.create({ url }); };

/**
 * A snippet as nodes: odd parts are the matched words.
 * @param {string[]} parts
 */
function snippetNodes(parts) {
  return parts.map((p, i) => (i % 2 === 1 ? el('mark', {}, p) : p));
}

/** The search box: its results, kept in step with what is typed. */
class SearchView {
  constructor() {
    this.input = /** @type {HTMLInputElement} */ ($('search-query'));
    this.list = $('search-results');
    this.info = $('search-info');
    /** @type {SearchHit[]} */
    this.hits = [];
    this.active = -1;
    this.asked = 0;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.timer = undefined;
    this.lastLive = 0;
    this.input.addEventListener('input', () => {
      clearTimeout(this.timer);
      this.select(-1);
      this.timer = setTimeout(() => { this.run().catch(() => {}); }, DEBOUNCE_MS);
    });
    this.input.addEventListener('keydown', (e) => this.key(e));
    this.list.addEventListener('keydown', (e) => this.key(e));
  }

  /**
   * Asks the host for the current query's pages; a late answer to an older query is dropped, and
   * so is a live refresh's answer that arrives after the user selected a result (it was asked
   * before the selection, and would move the list under it).
   * @param {boolean} [live] asked because the crawl fetched pages, not because the user typed
   */
  async run(live = false) {
    const query = this.input.value;
    const asked = ++this.asked;
    const stale = () => asked !== this.asked || (live && this.active >= 0);
    if (!query.trim()) {
      this.show([], '');
      return;
    }
    try {
      const hits = /** @type {SearchHit[]} */ (await send({ type: 'search', query, limit: 20 }));
      if (stale()) return;
      this.show(hits, hits.length ? '' : 'No fetched page has all these words yet.');
    } catch (e) {
      if (stale()) return;
      this.show([], e instanceof Error ? e.message : String(e));
    }
  }

  /**
   * The crawl fetched pages: the results are asked again, at most every few seconds, but not while
   * a result is selected: the list holds still under the user's arrows, so Enter opens the page
   * they chose (a refresh could move it or push it off the list). Typing or Escape lets it follow
   * again.
   */
  live() {
    const now = Date.now();
    if (!this.input.value.trim() || this.active >= 0 || now - this.lastLive < LIVE_MS) return;
    this.lastLive = now;
    this.run(true).catch(() => {});
  }

  /**
   * @param {SearchHit[]} hits
   * @param {string} info
   */
  show(hits, info) {
    const keep = this.hits[this.active]?.url;
    this.hits = hits;
    this.active = keep ? hits.findIndex((h) => h.url === keep) : -1;
    this.info.textContent = info;
    this.list.dataset.count = String(hits.length);
    this.list.replaceChildren(...hits.map((h, i) => {
      const title = h.title.trim() || shortUrl(h.url);
      const open = el('a', { href: h.url, class: 'open', title: h.url }, 'open');
      open.addEventListener('click', (e) => { e.preventDefault(); openTab(h.url); });
      const li = el('li', { id: `search-hit-${i}`, role: 'option', 'data-url': h.url, 'aria-selected': 'false' },
        el('div', { class: 'hit-head' }, el('span', { class: 'hit-title' }, title),
          el('span', { class: 'score', title: 'relevance R to your good topics' }, `R ${fixed(h.relevance, 2)}`), open),
        el('div', { class: 'snippet small' }, ...snippetNodes(h.snippet)),
        el('div', { class: 'url small' }, shortUrl(h.url)));
      li.addEventListener('click', (e) => {
        if (e.target !== open) this.select(i);
      });
      li.addEventListener('dblclick', () => openTab(h.url));
      return li;
    }));
    this.select(this.active);
  }

  /** @param {number} i the result to make active (-1: none) */
  select(i) {
    this.active = i;
    for (const [k, li] of Array.from(this.list.children).entries()) {
      li.setAttribute('aria-selected', String(k === i));
    }
    const li = i >= 0 ? /** @type {HTMLElement | undefined} */ (this.list.children[i]) : undefined;
    if (li) {
      this.input.setAttribute('aria-activedescendant', li.id);
      li.scrollIntoView({ block: 'nearest' });
    } else {
      this.input.removeAttribute('aria-activedescendant');
    }
  }

  /** @param {KeyboardEvent} e arrows move, Enter opens the active result (the first if none) */
  key(e) {
    if (e.key === 'ArrowDown' && this.hits.length) {
      e.preventDefault();
      this.select(Math.min(this.active + 1, this.hits.length - 1));
    } else if (e.key === 'ArrowUp' && this.hits.length) {
      e.preventDefault();
      this.select(Math.max(this.active - 1, 0));
    } else if (e.key === 'Enter' && this.hits.length) {
      e.preventDefault();
      clearTimeout(this.timer);
      openTab(this.hits[Math.max(this.active, 0)].url);
    } else if (e.key === 'Escape') {
      this.input.value = '';
      this.show([], '');
    }
  }
}

/** "New since you last looked", counted on the panel and in its title. */
class NewsView {
  constructor() {
    /** Unix seconds: the panel's previous opening (what is new is after it). */
    this.since = 0;
    /** @type {Set<string>} pages marked seen one by one since then */
    this.seen = new Set();
    /** @type {NewsItem[]} */
    this.items = [];
    this.count = 0;
    this.lastLive = 0;
    this.opened = false;
    this.baseTitle = document.title;
    $('news-mark-all').addEventListener('click', () => { this.markAll().catch(() => {}); });
  }

  /** Reads when the panel was last opened and remembers this opening for the next one. */
  async open() {
    const stored = await seenRecord();
    this.since = Number(stored.lastOpened) || 0;
    this.seen = new Set(Array.isArray(stored.seenUrls) ? stored.seenUrls : []);
    const r = await send({ type: 'whats_new', since: this.since });
    await this.save(r.now);
    this.opened = true;
    this.show(r);
  }

  /** @param {number} [lastOpened] */
  async save(lastOpened) {
    const stored = await seenRecord();
    await chrome.storage.local.set({ [SEEN_KEY]: {
      lastOpened: lastOpened ?? stored.lastOpened ?? 0, seenUrls: [...this.seen] } });
  }

  /** Asks again (the crawl fetched pages), at most every few seconds. */
  live() {
    const now = Date.now();
    if (now - this.lastLive < LIVE_MS) return;
    this.lastLive = now;
    this.refresh().catch(() => {});
  }

  async refresh() {
    this.show(await send({ type: 'whats_new', since: this.since }));
  }

  /** Everything listed now is seen: "new" starts again from the host's time now. */
  async markAll() {
    const r = await send({ type: 'whats_new', since: this.since, limit: 1 });
    this.since = r.now;
    this.seen.clear();
    await this.save(r.now);
    await this.refresh();
  }

  /** @param {string} url */
  async markSeen(url) {
    this.seen.add(url);
    await this.save();
    this.render();
  }

  /** @param {{count: number, pages: NewsItem[]}} r */
  show(r) {
    this.items = r.pages;
    this.count = r.count;
    // Seen marks of pages no longer listed are forgotten.
    const listed = new Set(r.pages.map((p) => p.url));
    for (const u of this.seen) if (!listed.has(u)) this.seen.delete(u);
    this.render();
  }

  render() {
    const unseen = this.items.filter((p) => !this.seen.has(p.url));
    const n = Math.max(0, this.count - (this.items.length - unseen.length));
    const count = $('news-count');
    count.textContent = String(n);
    count.dataset.count = String(n);
    document.title = n ? `(${n}) ${this.baseTitle}` : this.baseTitle;
    $('news-empty').hidden = n > 0;
    /** @type {HTMLButtonElement} */ ($('news-mark-all')).disabled = n === 0;
    $('news-list').replaceChildren(...unseen.map((p) => {
      const seen = el('button', { class: 'seen small-button', title: 'Seen: take it off the list',
        'aria-label': `seen: ${p.title || shortUrl(p.url)}` }, '✓');
      seen.addEventListener('click', () => { this.markSeen(p.url).catch(() => {}); });
      const link = el('a', { href: p.url, title: p.url }, p.title.trim() || shortUrl(p.url));
      link.addEventListener('click', (e) => {
        e.preventDefault();
        openTab(p.url);
        this.markSeen(p.url).catch(() => {});
      });
      return el('li', { 'data-url': p.url, 'data-kind': p.kind }, link,
        el('span', { class: 'kind small' }, p.kind === 'changed' ? 'changed' : 'new'),
        el('span', { class: 'score' }, `R ${fixed(p.relevance, 2)}`), seen);
    }));
  }
}

/** @type {SearchView | null} */
let search = null;
/** @type {NewsView | null} */
let news = null;

/** Wires the search box and "what is new" (once), and reads what is new since the last look. */
export async function wireSearch() {
  if (!search) search = new SearchView();
  if (!news) news = new NewsView();
  if (!news.opened) await news.open();
  else await news.refresh();
}

/** The crawl fetched pages: the results and the new count follow. */
export function searchLive() {
  search?.live();
  if (news?.opened) news.live();
}
