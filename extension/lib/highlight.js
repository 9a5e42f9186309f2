// @ts-check
/**
 * "Highlight promising links" (accelerated-focused-crawling-2002 §1: a reader picks, from a
 * page's layout, the links most likely to lead somewhere useful). The page's DOM leaves and
 * links are read in the tab (lib/page-links.js), scored in WebAssembly by the host crawler's
 * own rule (`ForagerModel.scoreLinks`: the apprentice of the host's crawl, else the words around
 * each link), and the best are outlined in the page and listed in the side panel as "best next
 * links", each of which can be queued for the crawl.
 *
 * Only `activeTab` + `scripting` on the user's action; on the sites the user opted in, the
 * site's own host permission, asked for on that click.
 *
 * @module highlight
 */

import { pageLinks } from './page-links.js';
import { HostRefusal } from './protocol.js';
import { visibleText } from './visible-text.js';

/** Links marked on the page. */
export const MARKED = 5;
/** Links listed as "best next links". */
export const BEST_LINKS = 10;
/** The apprentice is fetched again from the host at most this often while a crawl changes it. */
const APPRENTICE_MAX_AGE_MS = 60_000;
const SITES_KEY = 'highlightSites';

/**
 * One scored link, as the side panel lists it.
 * @typedef {{url: string, anchor: string, score: number, topic: string, rule: 'apprentice' | 'context',
 *   fetched?: boolean, menu?: boolean}} BestLink `topic`: the good topic the link leads to, '' when the page it
 *   leads to looks like none of the good ones; `fetched`: the crawl has the page already (listed only when too few
 *   new links are left); `menu`: it is in the site's navigation (listed after the links of the page's content)
 * @typedef {{tabId: number, url: string, title: string, links: BestLink[], scored: number, marked: number,
 *   rule: 'apprentice' | 'context', instances: number[] | null, ms: number, at: number,
 *   leftOut?: number}} Highlight `leftOut`: promising links left out because the crawl fetched them
 * @typedef {import('./protocol.js').HostPort} HostPort
 * @typedef {import('./model.js').ModelStore} ModelStore
 */

/**
 * The page's URL without its fragment, to leave out links to the page itself.
 * @param {string} url
 */
function withoutFragment(url) {
  try {
    const u = new URL(url);
    u.hash = '';
    return u.href;
  } catch {
    return url;
  }
}

/**
 * Names a link's topic only when it is good (or under a good topic): a tooltip must never say a
 * link leads to "your topics" and name one that is not.
 * @param {import('../pkg/forager_classifier.js').ForagerModel} model
 * @returns {(topic: string) => string}
 */
function goodTopic(model) {
  /** @type {{path: string, good: boolean}[]} */
  const topics = model.topics();
  const good = topics.filter((t) => t.good).map((t) => t.path);
  return (topic) => (good.some((g) => topic === g || topic.startsWith(`${g}/`)) ? topic : '');
}

export class Highlighter {
  /**
   * @param {HostPort} port
   * @param {ModelStore} models
   */
  constructor(port, models) {
    this.port = port;
    this.models = models;
    /** @type {Uint8Array | null} the host apprentice's bytes */
    this.apprentice = null;
    /** @type {number[] | null} its instances [low, high] */
    this.instances = null;
    this.fetchedAt = 0;
    /** @type {object | null} the model the apprentice was last given to */
    this.appliedTo = null;
    /** @type {Highlight | null} the last page highlighted */
    this.last = null;
  }

  /** Fetches the apprentice from the host when it is there and the copy is old. */
  async refreshApprentice() {
    if (!this.port.connected || Date.now() - this.fetchedAt < APPRENTICE_MAX_AGE_MS) return;
    try {
      this.apprentice = await this.port.download('get_apprentice', {});
      this.fetchedAt = Date.now();
      this.appliedTo = null;
    } catch (e) {
      // No crawl yet: the words around each link decide.
      if (!(e instanceof HostRefusal && e.code === 'missing')) throw e;
      this.apprentice = null;
      this.fetchedAt = Date.now();
      this.appliedTo = null;
    }
  }

  /** Forgets the apprentice copy (a new crawl), so the next highlight asks the host again. */
  forget() {
    this.fetchedAt = 0;
  }

  /**
   * The model with the apprentice given to it.
   * @returns {Promise<import('../pkg/forager_classifier.js').ForagerModel>}
   */
  async model() {
    await this.refreshApprentice().catch((e) => console.warn('forager: apprentice:', e));
    const model = await this.models.get();
    if (this.appliedTo !== model) {
      if (this.apprentice) this.instances = Array.from(model.setApprentice(this.apprentice), Number);
      else { model.clearApprentice(); this.instances = null; }
      this.appliedTo = model;
    }
    return model;
  }

  /**
   * Reads the tab's page and scores every link, as the host's crawler would score them.
   * @param {number} tabId
   */
  async score(tabId) {
    const model = await this.model();
    const [textResult] = await chrome.scripting.executeScript({ target: { tabId }, func: visibleText });
    const [read] = await chrome.scripting.executeScript({ target: { tabId }, func: pageLinks, args: ['read'] });
    const page = /** @type {import('./page-links.js').PageLinks} */ (read.result);
    const text = /** @type {string} */ (textResult.result ?? '');
    const t0 = performance.now();
    /** @type {{score: number, priority: number, topic: string, rule: 'apprentice' | 'context'}[]} */
    const scores = model.scoreLinks(text, page.leaves,
      page.links.map((l) => ({ start: l.start, end: l.end, anchor: l.anchor, boilerplate: l.boilerplate })));
    return { page, scores, ms: performance.now() - t0 };
  }

  /**
   * Scores every link of the tab's page, marks the best and remembers them.
   * @param {number} tabId
   * @returns {Promise<Highlight>}
   */
  async highlight(tabId) {
    const { page, scores, ms } = await this.score(tabId);
    const self = withoutFragment(page.url);
    // The links of the page's content first, then the site's navigation (menus, footers, bars
    // of links), each by priority (links in boilerplate weigh less, as in the crawler's soft
    // focus): a reader's next link is in what they read, however confident a score of "Home"
    // or "About" is. The best link element per target; the score shown is the predicted
    // relevance.
    /** @type {Map<string, {i: number, priority: number, score: number, menu: boolean}>} */
    const best = new Map();
    page.links.forEach((l, i) => {
      const target = withoutFragment(l.href);
      if (target === self) return;
      const had = best.get(target);
      const mine = { i, ...scores[i], menu: Boolean(l.menu) };
      // A target linked from the content and from a menu counts as a content link.
      const better = had && (had.menu !== mine.menu ? !had.menu : had.priority >= mine.priority);
      if (!better) best.set(target, mine);
    });
    const sorted = [...best.values()].sort((a, b) => Number(a.menu) - Number(b.menu) || b.priority - a.priority ||
      a.i - b.i);
    // Pages the crawl has (fetched or given up on) are not next links: left out, or at the end.
    const known = await this.known(sorted.slice(0, 4 * BEST_LINKS).map((r) => page.links[r.i].href));
    const fresh = sorted.filter((r) => !known.has(page.links[r.i].href));
    const ranked = fresh.length >= BEST_LINKS ? fresh : [...fresh, ...sorted.filter((r) => known.has(page.links[r.i].href))];
    const good = goodTopic(await this.model());
    const marks = ranked.filter((r) => !known.has(page.links[r.i].href)).slice(0, MARKED)
      .map((r, k) => ({ i: r.i, href: page.links[r.i].href, rank: k + 1, score: r.score, topic: good(scores[r.i].topic) }));
    const [after] = await chrome.scripting.executeScript({ target: { tabId }, func: pageLinks, args: ['mark', marks] });
    this.last = {
      tabId, url: page.url, title: page.title, scored: page.links.length,
      marked: /** @type {import('./page-links.js').PageLinks} */ (after.result).marked,
      rule: scores[0]?.rule ?? (this.instances ? 'apprentice' : 'context'),
      instances: this.instances, ms, at: Date.now(),
      leftOut: sorted.slice(0, 4 * BEST_LINKS).filter((r) => known.has(page.links[r.i].href)).length -
        ranked.slice(0, BEST_LINKS).filter((r) => known.has(page.links[r.i].href)).length,
      links: ranked.slice(0, BEST_LINKS).map((r) => ({ url: page.links[r.i].href, anchor: page.links[r.i].anchor,
        score: r.score, topic: good(scores[r.i].topic), rule: scores[r.i].rule,
        ...(known.has(page.links[r.i].href) ? { fetched: true } : {}), ...(r.menu ? { menu: true } : {}) })),
    };
    return this.last;
  }

  /**
   * The URLs among `urls` the crawl has fetched or given up on (none without the host).
   * @param {string[]} urls
   * @returns {Promise<Set<string>>}
   */
  async known(urls) {
    if (!this.port.connected || urls.length === 0) return new Set();
    try {
      const r = await this.port.request('link_fates', { urls });
      return new Set(r.fates.filter((f) => f.fate === 'fetched' || f.fate === 'failed').map((f) => f.url));
    } catch (e) {
      console.warn('forager: link fates:', e);
      return new Set();
    }
  }

  /**
   * Removes the marks from the tab's page.
   * @param {number} tabId
   * @returns {Promise<number>} marks left (0)
   */
  async clear(tabId) {
    const [r] = await chrome.scripting.executeScript({ target: { tabId }, func: pageLinks, args: ['clear'] });
    if (this.last?.tabId === tabId) this.last = null;
    return /** @type {import('./page-links.js').PageLinks} */ (r.result).marked;
  }
}

/**
 * The origins whose every page is highlighted when it loads (the user's opt-in per site).
 * @returns {Promise<string[]>}
 */
export async function highlightSites() {
  const v = (await chrome.storage.local.get(SITES_KEY))[SITES_KEY];
  return Array.isArray(v) ? v : [];
}

/**
 * Turns "highlight every page of this site" on or off for `origin`.
 * @param {string} origin
 * @param {boolean} on
 */
export async function setHighlightSite(origin, on) {
  const sites = new Set(await highlightSites());
  if (on) sites.add(origin); else sites.delete(origin);
  await chrome.storage.local.set({ [SITES_KEY]: [...sites] });
  return [...sites];
}
