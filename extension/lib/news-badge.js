// @ts-check
/**
 * The toolbar icon's count of what is new: relevant pages the crawl fetched for the first
 * time, or found changed on a revisit, since the user last looked (opened the side panel or
 * marked all seen), less the ones marked seen one by one — the side panel's "New since you
 * last looked", on the icon of every tab. Cleared when the user looks. (A tab's own badge, the
 * relevance of the page shown when classifying as one browses, takes its place in that tab.)
 *
 * @module news-badge
 */

/** Where the last look is kept (`chrome.storage.local`), shared with the side panel. */
export const SEEN_KEY = 'newsSeen';

/** The least time between two counts asked of the host while a crawl brings pages. */
const GAP_MS = 3000;
/** The badge's colour (the panel's accent). */
const COLOR = '#1e6ec8';

/**
 * @typedef {{count: number, pages: {url: string}[]}} News what the host's `whats_new` answers
 */

/** Keeps the toolbar icon's count in step with the crawl and with the user's looks. */
export class NewsBadge {
  /** @param {(since: number) => Promise<News>} ask the host's `whats_new` since a Unix time */
  constructor(ask) {
    this.ask = ask;
    this.last = 0;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.timer = undefined;
    /** @type {string | null} the text shown (null before the first count) */
    this.shown = null;
  }

  /** The crawl brought pages: count again, at most every few seconds. */
  soon() {
    if (this.timer !== undefined) return;
    const wait = Math.max(0, this.last + GAP_MS - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.update().catch(() => {});
    }, wait);
  }

  /**
   * Counts what is new since the last look and shows it.
   * @returns {Promise<number>}
   */
  async update() {
    this.last = Date.now();
    /** @type {{lastOpened?: number, seenUrls?: string[]}} */
    const stored = (await chrome.storage.local.get(SEEN_KEY))[SEEN_KEY] ?? {};
    const news = await this.ask(Number(stored.lastOpened) || 0);
    const seen = new Set(Array.isArray(stored.seenUrls) ? stored.seenUrls : []);
    const n = Math.max(0, news.count - news.pages.filter((p) => seen.has(p.url)).length);
    await this.show(n);
    return n;
  }

  /** @param {number} n */
  async show(n) {
    const text = n <= 0 ? '' : n > 999 ? '999+' : String(n);
    if (text === this.shown) return;
    this.shown = text;
    await chrome.action.setBadgeBackgroundColor({ color: COLOR });
    await chrome.action.setBadgeText({ text });
    await chrome.action.setTitle({ title: n > 0
      ? `Forager: ${n} new relevant page${n === 1 ? '' : 's'} since you last looked (open the side panel)`
      : 'Forager' });
  }
}
