// @ts-check
/**
 * The native-messaging protocol (PROTOCOL.md, version 1) as types, and `HostPort`: one
 * `chrome.runtime.connectNative` port with request/reply matching, timeouts, events, the `hello`
 * handshake and reconnection with backoff.
 *
 * @module protocol
 */

import { base64ToBytes } from './base64.js';

export const HOST_NAME = 'org.forager.host';
export const PROTOCOL_VERSION = 1;
/** The largest page budget `start_crawl` accepts (the host's `MAX_PAGES`). */
export const MAX_PAGES = 10_000_000;
/** The longest delay between requests to one host, in seconds (the host's `MAX_DELAY`). */
export const MAX_DELAY = 60;

/**
 * @typedef {{kind: string, detail: string}} Alarm the crawl monitor's stagnation/diffusion alarm
 * @typedef {{state: 'idle' | 'running' | 'stopping', fetched: number, frontier: number,
 *   pages_per_sec: number, errors: number, recent_relevance: number,
 *   alarms?: (Alarm | string)[], paused?: string | null, hosts_waiting?: number,
 *   parked?: number, distill_every?: number, failing?: HostTrouble[], failing_hosts?: number,
 *   waiting?: {secs: number, hosts: number} | null, idle_secs?: number}} Status `alarms`: sent by hosts with the
 *   crawl monitor; `paused`: why every fetch fails for the crawler's own reason (a dead proxy), while the crawl
 *   waits and retries; `failing`: the failing hosts (cause in words, a URL, seconds to the next try), waiting
 *   ones first; `waiting`: while only URLs of failing hosts are left, how long until the next try
 * @typedef {{host: string, url: string, why: string, kind: string, retry_in?: number | null}} HostTrouble
 * @typedef {{url: string, fate: 'queued' | 'fetched' | 'failed' | 'new', why: string}} LinkFate what the
 *   crawl did with a URL: `queued` (by this request), `new` (not fetched yet), `fetched`, `failed` (given up on)
 * @typedef {{id: number, parent: number, path: string, name: string, title: string, good: boolean,
 *   examples: number, subtree_examples: number, self_trained?: number}} TopicInfo
 * @typedef {{seq: number, url: string, relevance: number, title: string}} Page
 * @typedef {{url: string, score: number, title?: string, relevant_links?: number, fetched_links?: number}} Hub
 *   `title`: the page's, when it has one; `relevant_links` of its `fetched_links` out-links to
 *   fetched pages lead to pages with R >= 0.5 (why it ranks)
 * @typedef {{hubs: Hub[], authorities: Hub[]}} HubsResult
 * @typedef {{topics: TopicInfo[]}} TopicsResult
 * @typedef {{topic: number, path: string, next_to: string, relation: 'sibling' | 'parent', pages: number,
 *   of: number, share: number, examples: {url: string, title: string}[]}} Suggestion a topic next to a
 *   good one that `pages` of the `of` pages linked from relevant pages are classified under
 * @typedef {{of: number, best: [string, number, number] | null}} Looked what the widening census looked at:
 *   the pages the good pages lead to outside the good topics, and the largest neighbour [path, pages, share]
 * @typedef {{status: Status}} StatusResult
 * @typedef {{url: string, title: string, snippet: string[], relevance: number, best_leaf: string}} SearchHit
 *   a page found: `snippet`'s odd items are the matched words, its even items the text between
 * @typedef {{url: string, title: string, relevance: number, best_leaf: string, kind: 'new' | 'changed',
 *   at: number}} NewsItem a relevant page first fetched (`new`) or a page changed on a revisit
 *   (`changed`) at Unix time `at`
 */

/**
 * Every request: its fields and its result, keyed on `type`.
 * @typedef {{
 *   hello: {fields: {version: number}, result: {version: number, host: string, crawl: Status,
 *     model_error?: string | null, database?: string}},
 *   topics: {fields: {}, result: TopicsResult},
 *   add_topic: {fields: {parent: number, name: string}, result: {id: number, topics: TopicInfo[]}},
 *   rename_topic: {fields: {topic: number, name: string}, result: TopicsResult},
 *   move_topic: {fields: {topic: number, parent: number}, result: TopicsResult},
 *   delete_topic: {fields: {topic: number}, result: {removed_examples: number, topics: TopicInfo[]}},
 *   set_good: {fields: {topic: number, good: boolean}, result: TopicsResult},
 *   add_example: {fields: {topic: number, url: string, text: string}, result: TopicsResult},
 *   mark_not_relevant: {fields: {url: string, text?: string, undo?: boolean},
 *     result: {topics: TopicInfo[], not_relevant: string[], not_relevant_total: number}},
 *   get_model: {fields: {offset: number}, result: {total: number, offset: number, data: string}},
 *   get_apprentice: {fields: {offset: number}, result: {total: number, offset: number, data: string}},
 *   queue_links: {fields: {urls: string[]}, result: {queued: number, running: boolean, fates: LinkFate[],
 *     status: Status}},
 *   link_fates: {fields: {urls: string[]}, result: {fates: LinkFate[]}},
 *   give_up_hosts: {fields: {hosts: string[]}, result: {hosts: number, status: Status}},
 *   suggestions: {fields: {}, result: {suggestions: Suggestion[], looked?: Looked | null}},
 *   export: {fields: {what: ExportWhat, format?: 'csv' | 'jsonl', offset: number},
 *     result: {total: number, offset: number, data: string}},
 *   start_crawl: {fields: CrawlOptions, result: {started: boolean, retried?: number, queued?: number,
 *     status: Status}},
 *   stop_crawl: {fields: {}, result: StatusResult},
 *   new_crawl: {fields: {}, result: {kept: string | null, status: Status}},
 *   set_crawl_db: {fields: {url: string | null}, result: {database: string, shared: boolean,
 *     status: Status}},
 *   examples: {fields: {topic: number}, result: {examples: ExampleInfo[], truncated: boolean}},
 *   remove_example: {fields: {url: string}, result: TopicsResult},
 *   move_example: {fields: {url: string, topic: number}, result: TopicsResult},
 *   status: {fields: {}, result: StatusResult},
 *   hubs: {fields: {top?: number}, result: HubsResult},
 *   recent_pages: {fields: {limit?: number}, result: {pages: Page[]}},
 *   search: {fields: {query: string, limit?: number}, result: {hits: SearchHit[]}},
 *   whats_new: {fields: {since?: number, limit?: number},
 *     result: {now: number, count: number, pages: NewsItem[]}},
 *   self_train: {fields: {min_p?: number, clear?: boolean}, result: {added: number, pages: number, removed: number, topics: TopicInfo[]}},
 * }} RequestMap
 * @typedef {keyof RequestMap} RequestType
 * @typedef {{url: string, topic: string, tokens: number, self_trained: boolean}} ExampleInfo
 * @typedef {'hubs' | 'authorities' | 'pages' | 'report' | 'warc'} ExportWhat what `export`
 *   exports (the report is HTML, the lists CSV or JSON Lines, the archive a .warc.gz)
 * @typedef {{seeds: string[], pages?: number | null, proxy?: string | null, apprentice?: boolean,
 *   delay?: number | null, retry_failed?: boolean, from?: string[], warc?: boolean}} CrawlOptions (null, from the
 *   popup: forget the remembered value; `retry_failed` puts the failed URLs back in the frontier
 *   first; `from`: "crawl more from here", fetched pages whose unvisited links go first)
 */

/**
 * Host-to-browser frames (the host's `Outgoing`, native-host/src/native/reply.rs).
 * @typedef {'invalid' | 'not_greeted' | 'stale' | 'busy' | 'missing' | 'failed'} RefusalCode the
 *   kind of a refusal: a bad request, no hello yet, an edit against another copy of the
 *   taxonomy, a crawl running or stopping, nothing to act on yet (no crawl, page not fetched),
 *   the host failed (disk, database)
 * @typedef {{type: 'reply', id: number | null, ok: true, result: any}
 *   | {type: 'reply', id: number | null, ok: false, error: string, code?: RefusalCode}} Reply
 * @typedef {{type: 'progress', status: Status}
 *   | {type: 'pages', pages: Page[]}
 *   | {type: 'hubs', hubs: Hub[], authorities: Hub[]}
 *   | {type: 'crawl_stopped', reason: string, message?: string, status: Status}} HostEvent `reason`: a
 *   code (`PageBudget`...); `message`: why, as a sentence for people
 */

/**
 * What a `HostPort` reports about its connection.
 * @typedef {{connected: boolean, connecting: boolean, host: string | null, error: string | null,
 *   attempts: number, seen: boolean}} ConnectionState `seen`: the host answered once (so a lost
 *   connection means it stopped, not that it is missing)
 */

/**
 * The subset of `chrome.runtime.Port` HostPort uses (tests may pass a fake).
 * @typedef {{postMessage(msg: any): void, disconnect(): void,
 *   onMessage: {addListener(fn: (msg: any) => void): void},
 *   onDisconnect: {addListener(fn: () => void): void}}} PortLike
 */

/** Seconds between reconnection attempts; the last value repeats. */
const BACKOFF_MS = [500, 1000, 2000, 4000, 8000, 15000, 30000];
const DEFAULT_TIMEOUT_MS = 30000;

/**
 * A message as a sentence: a capital first letter and a full stop.
 * @param {string} s
 */
export function sentence(s) {
  const t = s.trim();
  if (!t) return t;
  return t[0].toUpperCase() + t.slice(1) + (/[.!?)]$/.test(t) ? '' : '.');
}

/** The host refused a request; `code` says what kind of refusal it was. */
export class HostRefusal extends Error {
  /**
   * @param {string} message
   * @param {RefusalCode | undefined} code
   */
  constructor(message, code) {
    super(message);
    /** @type {string} the technical detail (the request, the code), shown on demand */
    this.detail = '';
    this.name = 'HostRefusal';
    this.code = code;
  }
}

/** A request failed because the host is not connected or went away. */
export class HostUnavailableError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'HostUnavailableError';
  }
}

/**
 * One native-messaging port to the Forager host, kept open: after a disconnect (the host was
 * killed, crashed or is not installed) it reconnects with exponential backoff and repeats the
 * `hello` handshake; the `onState` listeners see every change and `onConnect` listeners run
 * after each successful handshake (to resubscribe).
 */
export class HostPort {
  /**
   * @param {{name?: string, connect?: (name: string) => PortLike, timeoutMs?: number}} [options]
   */
  constructor(options = {}) {
    this.name = options.name ?? HOST_NAME;
    this.connectFn = options.connect ?? ((/** @type {string} */ n) => chrome.runtime.connectNative(n));
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    /** @type {PortLike | null} */
    this.port = null;
    this.nextId = 1;
    /** @type {Map<number, {resolve: (r: any) => void, reject: (e: Error) => void, timer: any, type: string}>} */
    this.pending = new Map();
    /** @type {ConnectionState} */
    this.state = { connected: false, connecting: false, host: null, error: null, attempts: 0, seen: false };
    /** @type {Promise<void> | null} the handshake in flight */
    this.handshake = null;
    /** @type {any} */
    this.retryTimer = null;
    this.stopped = true;
    /** @type {Set<(e: HostEvent) => void>} */
    this.eventListeners = new Set();
    /** @type {Set<(s: ConnectionState) => void>} */
    this.stateListeners = new Set();
    /** @type {Set<(hello: RequestMap['hello']['result']) => void | Promise<void>>} */
    this.connectListeners = new Set();
  }

  /** Whether the handshake succeeded on the current port. */
  get connected() {
    return this.state.connected;
  }

  /** @param {(e: HostEvent) => void} fn */
  onEvent(fn) { this.eventListeners.add(fn); }

  /** @param {(s: ConnectionState) => void} fn */
  onState(fn) { this.stateListeners.add(fn); }

  /** @param {(hello: RequestMap['hello']['result']) => void | Promise<void>} fn */
  onConnect(fn) { this.connectListeners.add(fn); }

  /** Connects (if not already) and keeps reconnecting until `stop()`. */
  start() {
    this.stopped = false;
    if (!this.port && !this.retryTimer) this.connect();
  }

  /** Closes the port and stops reconnecting. */
  stop() {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const port = this.port;
    this.port = null;
    port?.disconnect();
    this.failAll('host port closed');
    this.setState({ connected: false, connecting: false });
  }

  /** Reconnects now instead of waiting for the backoff timer (e.g. on a user's action). */
  reconnectNow() {
    if (this.port || this.stopped) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.connect();
  }

  /**
   * Sends a request and resolves with its result. Rejects with the host's error on `ok:false`,
   * with `HostUnavailableError` when the host is not connected or disconnects before replying,
   * and after the timeout.
   * @template {RequestType} K
   * @param {K} type
   * @param {RequestMap[K]['fields']} [fields]
   * @param {{timeoutMs?: number}} [options]
   * @returns {Promise<RequestMap[K]['result']>}
   */
  async request(type, fields, options = {}) {
    if (type !== 'hello') {
      if (this.handshake) await this.handshake.catch(() => {});
      if (!this.state.connected) {
        throw new HostUnavailableError(`host not connected${this.state.error ? `: ${this.state.error}` : ''}`);
      }
    }
    return this.send(type, fields ?? {}, options.timeoutMs ?? this.timeoutMs);
  }

  /**
   * @param {string} type
   * @param {object} fields
   * @param {number} timeoutMs
   * @returns {Promise<any>}
   */
  send(type, fields, timeoutMs) {
    const port = this.port;
    if (!port) return Promise.reject(new HostUnavailableError('host not connected'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`host did not answer "${type}" within ${Math.round(timeoutMs / 1000)} s`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer, type });
      try {
        port.postMessage({ ...fields, type, id });
      } catch (e) {
        clearTimeout(timer);
        this.pending.delete(id);
        reject(new HostUnavailableError(`host not connected: ${errorText(e)}`));
      }
    });
  }

  /**
   * A chunked answer (`get_model`, `export`), requested from offset 0 until offset + length
   * reaches its total, as one byte array.
   * @template {'get_model' | 'get_apprentice' | 'export'} T
   * @param {T} type
   * @param {Omit<RequestMap[T]['fields'], 'offset'>} fields
   * @returns {Promise<Uint8Array>}
   */
  async download(type, fields) {
    /** @type {Uint8Array[]} */
    const chunks = [];
    let offset = 0;
    let total = -1;
    do {
      const r = /** @type {{total: number, offset: number, data: string}} */ (
        await this.request(type, /** @type {any} */ ({ ...fields, offset })));
      const chunk = base64ToBytes(r.data);
      if (r.offset !== offset) throw new Error(`${type} answered offset ${r.offset}, asked ${offset}`);
      if (chunk.length === 0 && r.total > offset) throw new Error(`${type} returned an empty chunk`);
      total = r.total;
      chunks.push(chunk);
      offset += chunk.length;
    } while (offset < total);
    const bytes = new Uint8Array(offset);
    let at = 0;
    for (const c of chunks) { bytes.set(c, at); at += c.length; }
    return bytes;
  }

  /** Opens the port and runs the handshake. */
  connect() {
    this.retryTimer = null;
    this.state.attempts++;
    this.setState({ connecting: true });
    /** @type {PortLike} */
    let port;
    try {
      port = this.connectFn(this.name);
    } catch (e) {
      this.lost(errorText(e));
      return;
    }
    this.port = port;
    port.onMessage.addListener((msg) => { if (this.port === port) this.receive(msg); });
    port.onDisconnect.addListener(() => {
      if (this.port !== port) return;
      const err = globalThis.chrome?.runtime?.lastError?.message;
      this.port = null;
      this.lost(err || (this.state.seen ? 'the Forager host stopped' : 'no Forager host answered'));
    });
    this.handshake = this.send('hello', { version: PROTOCOL_VERSION }, this.timeoutMs).then(
      async (hello) => {
        this.handshake = null;
        this.state.attempts = 0;
        this.setState({ connected: true, connecting: false, host: hello.host, error: null, seen: true });
        for (const fn of this.connectListeners) {
          try { await fn(hello); } catch (e) { console.warn('forager: after hello:', e); }
        }
      },
      (e) => {
        this.handshake = null;
        // A refused handshake (wrong version, broken host): drop the port and retry later.
        if (this.port === port) {
          this.port = null;
          port.disconnect();
          this.lost(`hello failed: ${errorText(e)}`);
        }
      },
    );
  }

  /**
   * The port is gone: fail what is pending, report, schedule a reconnection.
   * @param {string} reason
   */
  lost(reason) {
    this.failAll(`The Forager host is not connected (${reason}).`);
    this.setState({ connected: false, connecting: false, host: null, error: reason });
    if (this.stopped || this.retryTimer) return;
    const delay = BACKOFF_MS[Math.min(this.state.attempts, BACKOFF_MS.length) - 1] ?? BACKOFF_MS[0];
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  /** @param {string} message */
  failAll(message) {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      this.pending.delete(id);
      p.reject(new HostUnavailableError(message));
    }
  }

  /** @param {any} msg a frame from the host */
  receive(msg) {
    if (!msg || typeof msg !== 'object') return;
    if (msg.type === 'reply') {
      const p = this.pending.get(msg.id);
      if (!p) {
        if (!msg.ok) console.warn('forager: host error without a pending request:', msg.error);
        return;
      }
      this.pending.delete(msg.id);
      clearTimeout(p.timer);
      if (msg.ok) p.resolve(msg.result);
      else {
        // The host's sentence as it is; the request and the code are the technical detail.
        const refusal = new HostRefusal(sentence(msg.error ?? 'the Forager host refused without saying why'), msg.code);
        refusal.detail = `request ${p.type}, refusal code ${msg.code ?? 'none'}`;
        p.reject(refusal);
      }
      return;
    }
    for (const fn of this.eventListeners) {
      try { fn(/** @type {HostEvent} */ (msg)); } catch (e) { console.warn('forager: event listener:', e); }
    }
  }

  /** @param {Partial<ConnectionState>} change */
  setState(change) {
    this.state = { ...this.state, ...change };
    for (const fn of this.stateListeners) {
      try { fn(this.state); } catch (e) { console.warn('forager: state listener:', e); }
    }
  }
}

/**
 * @param {unknown} e
 * @returns {string}
 */
export function errorText(e) {
  return e instanceof Error ? e.message : String(e);
}
