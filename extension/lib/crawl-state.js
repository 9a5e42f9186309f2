// @ts-check
/**
 * What the worker knows about the host's crawl: the last Status, the recent pages (for the
 * relevance plot), the distiller's hubs and authorities. Fed by host events and refreshed with
 * `status`, `recent_pages` and `hubs` after every (re)connection.
 *
 * @module crawl-state
 */

/**
 * @typedef {import('./protocol.js').Status} Status
 * @typedef {import('./protocol.js').Page} Page
 * @typedef {import('./protocol.js').Hub} Hub
 * @typedef {import('./protocol.js').HostEvent} HostEvent
 * @typedef {import('./protocol.js').HostPort} HostPort
 */

/** Pages kept for the plot (the host's `recent_pages` maximum). */
export const MAX_PAGES = 2000;
export const TOP_HUBS = 20;

export class CrawlView {
  constructor() {
    /** @type {Status | null} */
    this.status = null;
    /** @type {string | null} why the last crawl stopped */
    this.lastStop = null;
    /** @type {Page[]} oldest first */
    this.pages = [];
    /** @type {Hub[]} */
    this.hubs = [];
    /** @type {Hub[]} */
    this.authorities = [];
    /** @type {number | null} pages fetched when the host stopped under a running crawl */
    this.interrupted = null;
  }

  /**
   * A new crawl: nothing fetched, no hubs, nothing to say about the last one.
   * @param {Status} s the host's status of the empty crawl
   */
  clear(s) {
    this.status = s;
    this.pages = [];
    this.hubs = [];
    this.authorities = [];
    this.lastStop = null;
    this.interrupted = null;
  }

  /**
   * The Status a (re)connected host reports: a crawl that was running and is idle now was
   * interrupted (the host died under it), which the user is told until the next start.
   * @param {Status} s
   */
  reconnected(s) {
    const was = this.status?.state;
    if ((was === 'running' || was === 'stopping') && s.state === 'idle') this.interrupted = s.fetched;
    this.status = s;
  }

  /** @param {HostEvent} e */
  apply(e) {
    switch (e.type) {
      case 'progress': this.status = e.status; break;
      case 'pages': this.addPages(e.pages); break;
      case 'hubs': this.hubs = e.hubs; this.authorities = e.authorities; break;
      case 'crawl_stopped': this.status = e.status; this.lastStop = e.message ?? e.reason; break;
      default: break;
    }
  }

  /** @param {Page[]} pages new pages, oldest first */
  addPages(pages) {
    const lastSeq = this.pages.length ? this.pages[this.pages.length - 1].seq : -Infinity;
    for (const p of pages) if (p.seq > lastSeq) this.pages.push(p);
    if (this.pages.length > MAX_PAGES) this.pages.splice(0, this.pages.length - MAX_PAGES);
  }

  /**
   * Re-reads status, recent pages and hubs from the host (after a (re)connection).
   * @param {HostPort} port
   */
  async resync(port) {
    const [s, p, h] = await Promise.all([
      port.request('status'),
      port.request('recent_pages', { limit: MAX_PAGES }),
      port.request('hubs', { top: TOP_HUBS }),
    ]);
    this.status = s.status;
    this.pages = [];
    this.addPages(p.pages);
    this.hubs = h.hubs;
    this.authorities = h.authorities;
  }
}
