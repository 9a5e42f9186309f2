// @ts-check
/**
 * Messages between the extension's pages (popup, side panel) and its service worker, over
 * `chrome.runtime.sendMessage`: requests keyed on `type` that the worker answers with
 * `{ok, result | error}`, and broadcasts the worker sends to every open page.
 *
 * @module messages
 */

/**
 * @typedef {import('./protocol.js').Status} Status
 * @typedef {import('./protocol.js').TopicInfo} TopicInfo
 * @typedef {import('./protocol.js').Page} Page
 * @typedef {import('./protocol.js').Hub} Hub
 * @typedef {import('./protocol.js').HostEvent} HostEvent
 * @typedef {import('./protocol.js').CrawlOptions} CrawlOptions
 * @typedef {import('./protocol.js').ConnectionState} ConnectionState
 * @typedef {import('./taxonomy.js').TopicEdit} TopicEdit
 * @typedef {import('./highlight.js').Highlight} Highlight
 */

/**
 * The last page classified in the browser (its text stays in the worker).
 * @typedef {{url: string, title: string, best_leaf: string, best_leaf_id: number,
 *   path: {topic: string, p: number}[], relevance: number, log_relevance: number | null,
 *   hard_focus: boolean, none: boolean, background: number, textBytes: number, ms: number,
 *   at: number}} Classification
 */

/**
 * Everything a page shows, as `get_state` returns it.
 * @typedef {{
 *   host: ConnectionState,
 *   model: {source: string, bytes: number, topics: TopicInfo[], offlineEdits: number},
 *   crawl: Status | null,
 *   database: string | null,
 *   lastStop: string | null,
 *   interrupted: number | null,
 *   classification: Classification | null,
 *   hubs: Hub[],
 *   authorities: Hub[],
 *   pages: Page[],
 *   crawlOptions: Partial<CrawlOptions>,
 *   hostAccess: boolean,
 *   notice: string | null,
 *   importStatus: string,
 *   selfTrainStatus: string,
 *   highlight: Highlight | null,
 *   browse: import('./browse.js').BrowseSettings,
 *   highlightSites: string[],
 * }} State
 */

/**
 * Page-to-worker requests.
 * @typedef {{type: 'get_state'}
 *   | {type: 'classify_tab', tabId?: number}
 *   | TopicEdit
 *   | {type: 'add_classified_example', topic: number}
 *   | {type: 'mark_classified_not_relevant'}
 *   | {type: 'mark_url_not_relevant', url: string, undo?: boolean}
 *   | {type: 'mark_tab_not_relevant', tabId?: number}
 *   | {type: 'add_tab_example', topic: number, tabId?: number}
 *   | {type: 'highlight_links', tabId?: number}
 *   | {type: 'clear_highlights', tabId?: number}
 *   | {type: 'queue_links', urls: string[]}
 *   | {type: 'give_up_hosts', hosts: string[]}
 *   | {type: 'suggestions'}
 *   | {type: 'set_browse', on: boolean}
 *   | {type: 'set_browse_site', origin: string, off: boolean}
 *   | {type: 'set_highlight_site', origin: string, on: boolean}
 *   | {type: 'import_bookmarks', parent?: number}
 *   | {type: 'add_all_tabs', topic: number}
 *   | ({type: 'start_crawl'} & CrawlOptions)
 *   | {type: 'stop_crawl'}
 *   | {type: 'new_crawl'}
 *   | {type: 'set_crawl_db', url: string | null}
 *   | {type: 'examples', topic: number}
 *   | {type: 'remove_example', url: string}
 *   | {type: 'move_example', url: string, topic: number}
 *   | {type: 'status'}
 *   | {type: 'hubs'}
 *   | {type: 'recent_pages'}
 *   | {type: 'search', query: string, limit?: number}
 *   | {type: 'whats_new', since: number, limit?: number}
 *   | {type: 'self_train', clear?: boolean}
 *   | {type: 'export', what: import('./protocol.js').ExportWhat, format?: 'csv' | 'jsonl'}
 *   | {type: 'reconnect'}
 *   | {type: 'dismiss_notice', text: string}} UiRequest
 */

/**
 * Worker-to-pages broadcasts.
 * @typedef {{type: 'host_state', host: ConnectionState, crawl: Status | null,
 *     interrupted: number | null}
 *   | {type: 'host_event', event: HostEvent}
 *   | {type: 'classified', classification: Classification}
 *   | {type: 'topics_changed', topics: TopicInfo[], source: string, offlineEdits: number}
 *   | {type: 'notice', notice: string | null}
 *   | {type: 'import_status', text: string}
 *   | {type: 'self_train_status', text: string}
 *   | {type: 'best_links', highlight: Highlight | null}} Broadcast
 */

/** The `type`s of broadcasts (pages ignore every other message, e.g. each other's requests). */
export const BROADCAST_TYPES = new Set(['host_state', 'host_event', 'classified', 'topics_changed', 'notice',
  'import_status', 'self_train_status', 'best_links']);

/**
 * Sends a request to the service worker; resolves with its result or throws its error.
 * @param {UiRequest} request
 * @returns {Promise<any>}
 */
export async function send(request) {
  const reply = await chrome.runtime.sendMessage(request);
  if (!reply) throw new Error('no answer from the Forager service worker');
  if (!reply.ok) {
    const e = new Error(reply.error);
    /** @type {any} */ (e).detail = reply.detail ?? '';
    throw e;
  }
  return reply.result;
}

/**
 * Calls `fn` with every broadcast from the worker.
 * @param {(b: Broadcast) => void} fn
 */
export function onBroadcast(fn) {
  chrome.runtime.onMessage.addListener((msg) => {
    if (msg && BROADCAST_TYPES.has(msg.type)) fn(/** @type {Broadcast} */ (msg));
    // Never answer: requests are the worker's to answer.
    return undefined;
  });
}
