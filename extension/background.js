// @ts-check
/**
 * Forager's service worker: owns the model (WebAssembly, see lib/model.js) and the port to the
 * native host (lib/protocol.js); classifies pages from the context menu; answers the popup and
 * the side panel (lib/messages.js) and forwards host events to them.
 *
 * Everything that does not need the host (classification, taxonomy edits on the browser's copy)
 * works without it; the rest fails with a "host not connected" error the pages show.
 *
 * Tests drive it through `globalThis.forager` (see the end of this file).
 */

import { bytesToBase64 } from './lib/base64.js';
import { benchClassify, benchLinks } from './lib/bench.js';
import { collectBookmarkFolders } from './lib/bookmarks.js';
import { CrawlView, MAX_PAGES, TOP_HUBS } from './lib/crawl-state.js';
import { browseSettings, httpOrigin, setBrowseClassify, setBrowseOffSite, shouldClassify, showBadge } from './lib/browse.js';
import { Highlighter, highlightSites, setHighlightSite } from './lib/highlight.js';
import { BROADCAST_TYPES } from './lib/messages.js';
import { ModelStore } from './lib/model.js';
import { NewsBadge, SEEN_KEY } from './lib/news-badge.js';
import { MAX_EXAMPLE_CHARS, tabText } from './lib/page-text.js';
import { closeHtmlReader, htmlText, installAdvice, openPanel } from './lib/platform.js';
import { HostPort, HostRefusal, HostUnavailableError, errorText } from './lib/protocol.js';
import { addExamples, applyEdit, finishBatch, importFolders, offlineEditCount, replayOfflineEdits } from './lib/taxonomy.js';

/**
 * @typedef {import('./lib/messages.js').UiRequest} UiRequest
 * @typedef {import('./lib/messages.js').Broadcast} Broadcast
 * @typedef {import('./lib/messages.js').State} State
 * @typedef {import('./lib/messages.js').Classification} Classification
 * @typedef {import('./lib/protocol.js').CrawlOptions} CrawlOptions
 * @typedef {import('./lib/protocol.js').HostEvent} HostEvent
 */

const MENU_ID = 'forager-classify';
const HIGHLIGHT_MENU_ID = 'forager-highlight';
const NOT_RELEVANT_MENU_ID = 'forager-not-relevant';
const CRAWL_OPTIONS_KEY = 'crawlOptions';
const LAST_KEY = 'lastClassification';
/** stop_crawl waits for the crawl to wind down. */
const STOP_TIMEOUT_MS = 120_000;
/** Self-training classifies every page of the crawl: allow it minutes, not seconds. */
const SELF_TRAIN_TIMEOUT_MS = 600_000;

const port = new HostPort();
const models = new ModelStore();
const crawl = new CrawlView();
const highlighter = new Highlighter(port, models);
/** The toolbar icon's count of new relevant pages since the user last looked. */
const newsBadge = new NewsBadge((since) => port.request('whats_new', { since }));
/** @type {{view: Classification, text: string} | null} */
let last = null;
/** @type {string | null} the latest problem worth showing (offline edits not replayed, ...) */
let notice = null;
/** @type {string} what set it ('classify' for the context menu's errors) */
let noticeSource = '';
/** @type {string | null} where the host's crawl lives (a shared server's URL, password hidden) */
let database = null;
/** @type {string} the bookmark import's progress or outcome, for popups opened later */
let importStatus = '';
/** @type {Promise<any> | null} the import in progress */
let importing = null;

// ---------------------------------------------------------------------------------------------
// Broadcasts to open pages

/** @param {Broadcast} msg */
function broadcast(msg) {
  // No page open is the usual case, not an error.
  chrome.runtime.sendMessage(msg).catch(() => {});
}

/**
 * Shows `text` on every page until dismissed or replaced (null clears it).
 * @param {string | null} text
 * @param {string} [source] what it is about, so a later success can clear it
 */
function setNotice(text, source = '') {
  notice = text;
  noticeSource = text ? source : '';
  broadcast({ type: 'notice', notice: text });
}

async function broadcastTopics() {
  broadcast({ type: 'topics_changed', topics: await models.topics(), source: models.source,
    offlineEdits: await offlineEditCount() });
}

// ---------------------------------------------------------------------------------------------
// Classification

/**
 * Opens the side panel (a sidebar in Firefox) on the tab. Called before any `await` so that a
 * user gesture (the context-menu click) still counts; without one the browser refuses, which is
 * fine.
 * @param {number} tabId
 * @returns {Promise<void>}
 */
function openSidePanel(tabId) {
  try {
    return openPanel({ tabId }).catch(() => {});
  } catch {
    return Promise.resolve();
  }
}

/**
 * Classifies a tab's visible text with the browser's model, remembers the result (shown by the
 * side panel) and opens the side panel when it may.
 * @param {number} tabId
 * @returns {Promise<Classification>}
 */
export async function classifyTab(tabId) {
  const opening = openSidePanel(tabId);
  const page = await tabText(tabId);
  const view = await classifyText(page.url, page.title, page.text);
  await opening;
  return view;
}

/**
 * @param {string} url
 * @param {string} title
 * @param {string} text
 * @returns {Promise<Classification>}
 */
async function classifyText(url, title, text) {
  const model = await models.get();
  const t0 = performance.now();
  const c = model.classifyPage(url, text);
  const ms = performance.now() - t0;
  /** @type {Classification} */
  const view = { url, title, best_leaf: c.best_leaf, best_leaf_id: c.best_leaf_id, path: c.path,
    relevance: c.relevance, log_relevance: c.log_relevance, hard_focus: c.hard_focus,
    none: Boolean(c.none), background: c.background ?? 0,
    textBytes: new TextEncoder().encode(text).length, ms, at: Date.now() };
  last = { view, text };
  chrome.storage.session.set({ [LAST_KEY]: last }).catch((e) => console.warn('forager: session storage:', e));
  broadcast({ type: 'classified', classification: view });
  return view;
}

/**
 * "Not relevant to my topics" on a tab's page: its text becomes an example of the background
 * ("none of your topics"), then the page is classified again so the side panel shows the effect.
 * @param {number} tabId
 */
async function markTabNotRelevant(tabId) {
  const page = await tabText(tabId);
  const r = await applyEdit({ type: 'mark_not_relevant', url: page.url,
    text: page.text.slice(0, MAX_EXAMPLE_CHARS) }, { port, models });
  await afterModelChange();
  await classifyText(page.url, page.title, page.text);
  return r;
}

/**
 * Marks the most promising links of a tab's page and tells the side panel its best next links.
 * @param {number} tabId
 */
async function highlightTab(tabId) {
  const h = await highlighter.highlight(tabId);
  broadcast({ type: 'best_links', highlight: h });
  return h;
}

/**
 * A tab finished loading: classify it (when the user turned classify-as-you-browse on) and
 * highlight its links (on the sites the user chose). Errors are the page's, not the user's.
 * @param {number} tabId
 * @param {chrome.tabs.Tab} tab
 */
async function pageLoaded(tabId, tab) {
  const browse = await browseSettings();
  if (browse.on && await shouldClassify(tab, browse)) {
    try {
      const page = await tabText(tabId);
      await showBadge(tabId, await classifyText(page.url, page.title, page.text));
    } catch (e) {
      console.warn('forager: classify as you browse:', e);
    }
  } else if (browse.on) {
    // A page not classified shows no figure (the last page's would mislead).
    await showBadge(tabId, null).catch(() => {});
  }
  const origin = httpOrigin(tab.url);
  if (origin && !tab.incognito && (await highlightSites()).includes(origin) &&
      await chrome.permissions.contains({ origins: [`${origin}/*`] })) {
    await highlightTab(tabId).catch((e) => console.warn('forager: highlight:', e));
  }
}

/** After a model change, the last page's classification is redone (relevance may change). */
async function reclassifyLast() {
  if (last) await classifyText(last.view.url, last.view.title, last.text);
}

// ---------------------------------------------------------------------------------------------
// Bookmark import (in the worker, so it goes on when the popup closes)

/** What "Learn from the crawl" last did: every popup shows it, also one opened later. */
let selfTrainStatus = '';

/** @param {string} text */
function setSelfTrainStatus(text) {
  selfTrainStatus = text;
  broadcast({ type: 'self_train_status', text });
}

/** @param {string} text */
function setImportStatus(text) {
  importStatus = text;
  broadcast({ type: 'import_status', text });
}

/**
 * Every open http(s) tab (of every browser window) becomes an example of `topic` (one batch); the
 * tabs Forager may not read are counted, not fatal.
 * @param {number} topic
 * @returns {Promise<{added: number, unreadable: number, errors: string[], fates: {url: string, fate: string}[]}>}
 */
async function addAllTabs(topic) {
  const tabs = (await chrome.tabs.query({ windowType: 'normal' })).filter((t) => t.id !== undefined);
  /** @type {{url: string, text: string}[]} */
  const pages = [];
  /** @type {{url: string, fate: string}[]} every tab's fate, in tab order */
  const fates = [];
  for (const t of tabs) {
    const url = t.url || t.pendingUrl || t.title || 'a tab';
    if (!/^https?:/i.test(t.url ?? '')) {
      fates.push({ url, fate: 'skipped: not a web page' });
      continue;
    }
    const page = await tabText(/** @type {number} */ (t.id)).catch(() => null);
    if (page) {
      pages.push({ url: page.url, text: page.text.slice(0, MAX_EXAMPLE_CHARS) });
      fates.push({ url: page.url, fate: '' });
    } else {
      fates.push({ url, fate: 'unreadable: Forager may not read this page (allow it to read pages)' });
    }
  }
  const ctx = { port, models };
  try {
    const { added, errors, results } = await addExamples(topic, pages, ctx, await models.topics());
    const byUrl = new Map(results.map((r) => [r.url, r.fate]));
    for (const f of fates) if (!f.fate) f.fate = byUrl.get(f.url) ?? 'added';
    return { added, unreadable: fates.filter((f) => f.fate.startsWith('unreadable')).length, errors, fates };
  } finally {
    await finishBatch(ctx);
    await afterModelChange();
  }
}

/** Reads the bookmark folders and adds them as topics and examples; one import at a time. */
function importBookmarks(parent = 0) {
  importing ??= (async () => {
    try {
      setImportStatus('reading bookmarks…');
      const folders = await collectBookmarkFolders(htmlText, {
        onProgress: (done, total) => setImportStatus(`reading bookmarks ${done}/${total}…`),
      });
      if (!folders.length) {
        setImportStatus('no bookmark folders with http(s) bookmarks');
        return { topics: 0, examples: 0, errors: [] };
      }
      const fetched = folders.reduce((n, f) => n + f.pages.filter((p) => p.fetched).length, 0);
      setImportStatus('adding examples…');
      const r = await importFolders(folders, { port, models }, parent);
      await afterModelChange();
      const byTitle = r.examples - fetched;
      setImportStatus(`${r.topics} new topics, ${r.examples} examples (${fetched} pages read, the rest by title)` +
        (r.errors.length ? `; ${r.errors.length} failed` : '') +
        (byTitle > 0 ? `. ${byTitle} bookmark${byTitle === 1 ? '' : 's'} taught only ${byTitle === 1 ? 'its' : 'their'} title: ` +
          'Forager may not read those pages. Allow it to read pages, then import again, for examples with their text.' : ''));
      return r;
    } catch (e) {
      setImportStatus(`import failed: ${errorText(e)}`);
      throw e;
    } finally {
      importing = null;
      await closeHtmlReader();
    }
  })();
  return importing;
}

// ---------------------------------------------------------------------------------------------
// Requests from the pages

/** @returns {Promise<State>} */
async function getState() {
  await models.get();
  return {
    host: port.state,
    model: { source: models.source, bytes: models.bytes, topics: await models.topics(),
      offlineEdits: await offlineEditCount() },
    crawl: crawl.status,
    database,
    lastStop: crawl.lastStop,
    interrupted: crawl.interrupted,
    classification: last?.view ?? null,
    hubs: crawl.hubs,
    authorities: crawl.authorities,
    pages: crawl.pages,
    crawlOptions: (await chrome.storage.local.get(CRAWL_OPTIONS_KEY))[CRAWL_OPTIONS_KEY] ?? {},
    hostAccess: await chrome.permissions.contains({ origins: ['<all_urls>'] }),
    notice,
    importStatus,
    selfTrainStatus,
    highlight: highlighter.last,
    browse: await browseSettings(),
    highlightSites: await highlightSites(),
  };
}

/** @returns {Promise<number>} the active tab of the last focused window */
async function activeTabId() {
  const [tab] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
  if (tab?.id === undefined) throw new Error('no active tab');
  return tab.id;
}

/** Throws the "host not connected" error unless the host is there. */
function requireHost() {
  if (!port.connected) {
    throw new HostUnavailableError(`host not connected${port.state.error ? ` (${port.state.error})` : ''}; ` +
      `crawling needs the Forager host. ${installAdvice()}`);
  }
}

/**
 * Starts (or resumes) a crawl; a running one is stopped first so new seeds take effect. Proxy,
 * delay, budget and apprentice are remembered for the next start (e.g. "crawl more from here").
 * @param {CrawlOptions} options
 */
async function startCrawl(options) {
  requireHost();
  const saved = /** @type {Partial<CrawlOptions>} */ (
    (await chrome.storage.local.get(CRAWL_OPTIONS_KEY))[CRAWL_OPTIONS_KEY] ?? {});
  /** @type {Partial<CrawlOptions>} */
  const remembered = { ...saved };
  for (const k of /** @type {const} */ (['pages', 'proxy', 'delay', 'apprentice', 'warc'])) {
    // null: the user cleared the field, so the host's default applies again.
    if (options[k] === null) delete remembered[k];
    else if (options[k] !== undefined) /** @type {any} */ (remembered)[k] = options[k];
  }
  /** @type {CrawlOptions} */
  const request = { seeds: options.seeds ?? [] };
  if (remembered.pages) request.pages = remembered.pages;
  if (remembered.proxy) request.proxy = remembered.proxy;
  if (remembered.delay !== undefined && remembered.delay !== null) request.delay = remembered.delay;
  if (remembered.apprentice !== undefined) request.apprentice = remembered.apprentice;
  if (remembered.warc) request.warc = true;
  if (options.retry_failed) request.retry_failed = true;
  if (options.from?.length) request.from = options.from;
  if (crawl.status && crawl.status.state !== 'idle') {
    crawl.status = (await port.request('stop_crawl', {}, { timeoutMs: STOP_TIMEOUT_MS })).status;
  }
  const r = await port.request('start_crawl', request);
  // Remembered only once the host accepted them: a refused value must not break later starts.
  await chrome.storage.local.set({ [CRAWL_OPTIONS_KEY]: remembered });
  crawl.status = r.status;
  crawl.lastStop = null;
  if (crawl.interrupted !== null) {
    crawl.interrupted = null;
    broadcastHostState();
  }
  broadcast({ type: 'host_event', event: { type: 'progress', status: r.status } });
  return r;
}

/**
 * @param {UiRequest} msg
 * @returns {Promise<any>}
 */
export async function handle(msg) {
  switch (msg.type) {
    case 'get_state': return getState();
    case 'classify_tab': return classifyTab(msg.tabId ?? await activeTabId());
    case 'add_topic': case 'rename_topic': case 'move_topic': case 'delete_topic': case 'set_good':
    case 'add_example': {
      try {
        const r = await applyEdit(msg, { port, models });
        // A good tick shows at once: the pages re-classify behind it (they hear of it by broadcast).
        if (msg.type === 'set_good') afterModelChange().catch((e) => console.warn('forager: after set_good:', e));
        else await afterModelChange();
        return r;
      } catch (e) {
        // A stale edit brought the host's taxonomy: the popup shows it with the refusal.
        if (e instanceof HostRefusal && e.code === 'stale') await afterModelChange();
        throw e;
      }
    }
    case 'add_classified_example': {
      if (!last) throw new Error('no page classified yet');
      const r = await applyEdit({ type: 'add_example', topic: msg.topic, url: last.view.url,
        text: last.text.slice(0, MAX_EXAMPLE_CHARS) }, { port, models });
      await afterModelChange();
      return r;
    }
    case 'mark_classified_not_relevant': {
      if (!last) throw new Error('no page classified yet');
      const r = await applyEdit({ type: 'mark_not_relevant', url: last.view.url,
        text: last.text.slice(0, MAX_EXAMPLE_CHARS) }, { port, models });
      await afterModelChange();
      return r;
    }
    case 'mark_url_not_relevant': {
      // A page of the crawl (a hub, an authority): the host takes its stored text. Undo too.
      requireHost();
      const r = await port.request('mark_not_relevant', { url: msg.url, ...(msg.undo ? { undo: true } : {}) });
      await models.refreshFromHost(port);
      await afterModelChange();
      return r;
    }
    case 'mark_tab_not_relevant': return markTabNotRelevant(msg.tabId ?? await activeTabId());
    case 'add_tab_example': {
      const page = await tabText(msg.tabId ?? await activeTabId());
      const r = await applyEdit({ type: 'add_example', topic: msg.topic, url: page.url,
        text: page.text.slice(0, MAX_EXAMPLE_CHARS) }, { port, models });
      await afterModelChange();
      return r;
    }
    case 'highlight_links': return highlightTab(msg.tabId ?? await activeTabId());
    case 'clear_highlights': {
      const left = await highlighter.clear(msg.tabId ?? await activeTabId());
      broadcast({ type: 'best_links', highlight: null });
      return left;
    }
    case 'queue_links':
      requireHost();
      return port.request('queue_links', { urls: msg.urls });
    case 'give_up_hosts':
      requireHost();
      return port.request('give_up_hosts', { hosts: msg.hosts });
    case 'suggestions':
      requireHost();
      return port.request('suggestions', {});
    case 'search':
      requireHost();
      return (await port.request('search', { query: msg.query, limit: msg.limit })).hits;
    case 'whats_new':
      requireHost();
      return port.request('whats_new', { since: msg.since, limit: msg.limit });
    case 'set_browse': return setBrowseClassify(msg.on);
    case 'set_browse_site': return setBrowseOffSite(msg.origin, msg.off);
    case 'set_highlight_site': return setHighlightSite(msg.origin, msg.on);
    case 'import_bookmarks': return importBookmarks(msg.parent ?? 0);
    case 'add_all_tabs': return addAllTabs(msg.topic);
    case 'start_crawl': {
      const { type, ...options } = msg;
      return startCrawl(options);
    }
    case 'stop_crawl': {
      requireHost();
      const r = await port.request('stop_crawl', {}, { timeoutMs: STOP_TIMEOUT_MS });
      crawl.status = r.status;
      broadcast({ type: 'host_event', event: { type: 'progress', status: r.status } });
      return r;
    }
    case 'status': {
      requireHost();
      const r = await port.request('status');
      crawl.status = r.status;
      return r;
    }
    case 'hubs': {
      requireHost();
      const r = await port.request('hubs', { top: TOP_HUBS });
      crawl.hubs = r.hubs;
      crawl.authorities = r.authorities;
      return r;
    }
    case 'recent_pages': {
      requireHost();
      const r = await port.request('recent_pages', { limit: MAX_PAGES });
      crawl.pages = [];
      crawl.addPages(r.pages);
      return r;
    }
    case 'self_train': {
      // The host learns from its crawl; the extension then takes the host's model, also when
      // the reply is late or an error (the host may have changed its model all the same).
      requireHost();
      if (!msg.clear) setSelfTrainStatus('learning from the crawl…');
      let r;
      try {
        r = await port.request('self_train', { clear: !!msg.clear }, { timeoutMs: SELF_TRAIN_TIMEOUT_MS });
      } catch (e) {
        setSelfTrainStatus('');
        throw e;
      } finally {
        await models.refreshFromHost(port).catch(() => {});
        await afterModelChange();
      }
      // Said once the extension has the host's new model.
      setSelfTrainStatus(msg.clear ? `forgot ${r.removed} examples learned from the crawl`
        : `${r.added} of ${r.pages} crawled pages became examples` +
          (r.removed ? ` (replacing ${r.removed} learned before)` : ''));
      return r;
    }
    case 'examples':
      requireHost();
      return port.request('examples', { topic: msg.topic });
    case 'remove_example': case 'move_example': {
      // Examples live on the host; the browser's copy follows.
      requireHost();
      const { type, ...fields } = msg;
      await port.request(type, /** @type {any} */ (fields));
      await models.refreshFromHost(port);
      await afterModelChange();
      return { topics: await models.topics() };
    }
    case 'new_crawl': {
      // The host keeps the old database aside; the views start empty.
      requireHost();
      const r = await port.request('new_crawl', {});
      highlighter.forget();
      crawl.clear(r.status);
      broadcastHostState();
      return r;
    }
    case 'set_crawl_db': {
      // The crawl moves (to a shared server, or back to this computer): the views start over.
      requireHost();
      const r = await port.request('set_crawl_db', { url: msg.url });
      database = r.database;
      highlighter.forget();
      crawl.clear(r.status);
      broadcastHostState();
      return r;
    }
    case 'export': {
      // The crawl's results as text, for the page to save or show.
      requireHost();
      const fields = msg.format ? { what: msg.what, format: msg.format } : { what: msg.what };
      const bytes = await port.download('export', fields);
      // The archive is binary (base64 through the message channel); the rest is text.
      return msg.what === 'warc' ? bytesToBase64(bytes) : new TextDecoder().decode(bytes);
    }
    case 'reconnect': port.reconnectNow(); return port.state;
    case 'dismiss_notice': if (msg.text === notice) setNotice(null); return null;
    default: throw new Error(`unknown request ${JSON.stringify(/** @type {any} */ (msg).type)}`);
  }
}

async function afterModelChange() {
  await broadcastTopics();
  await reclassifyLast();
}

// ---------------------------------------------------------------------------------------------
// The host

/** Tells the pages about the connection and the crawl. */
function broadcastHostState() {
  broadcast({ type: 'host_state', host: port.state, crawl: crawl.status, interrupted: crawl.interrupted });
}

port.onState(broadcastHostState);

port.onEvent((/** @type {HostEvent} */ e) => {
  crawl.apply(e);
  if (e.type === 'pages' || e.type === 'crawl_stopped') newsBadge.soon();
  broadcast({ type: 'host_event', event: e });
});

port.onConnect(async (hello) => {
  crawl.reconnected(hello.crawl);
  database = hello.database ?? null;
  // The saved model could not be read: the host kept it aside; the user must hear of it.
  if (hello.model_error) setNotice(hello.model_error);
  // The crawl as the host sees it now (a killed crawl is no longer running), before the slower
  // model refresh below.
  broadcastHostState();
  const failures = await replayOfflineEdits(port).catch((e) => [errorText(e)]);
  if (failures.length) setNotice(`offline edits the host refused: ${failures.join('; ')}`);
  try {
    await models.refreshFromHost(port);
  } catch (e) {
    setNotice(`could not load the host's model: ${errorText(e)}`);
  }
  try {
    await crawl.resync(port);
  } catch (e) {
    console.warn('forager: resync after hello:', e);
  }
  broadcastHostState();
  newsBadge.soon();
  await afterModelChange();
});

// ---------------------------------------------------------------------------------------------
// Browser events (registered synchronously at start-up, as MV3 requires)

chrome.runtime.onInstalled.addListener(() => {
  chrome.contextMenus.removeAll(() => {
    chrome.contextMenus.create({ id: MENU_ID, title: 'Classify this page', contexts: ['page'] },
      () => void chrome.runtime.lastError);
    chrome.contextMenus.create({ id: HIGHLIGHT_MENU_ID, title: 'Highlight promising links', contexts: ['page'] },
      () => void chrome.runtime.lastError);
    chrome.contextMenus.create({ id: NOT_RELEVANT_MENU_ID, title: 'Not relevant to my topics', contexts: ['page'] },
      () => void chrome.runtime.lastError);
  });
});

chrome.contextMenus.onClicked.addListener((info, tab) => {
  if (info.menuItemId === HIGHLIGHT_MENU_ID && tab?.id !== undefined) {
    openSidePanel(tab.id);
    highlightTab(tab.id).then(
      () => { if (noticeSource === 'highlight') setNotice(null); },
      (e) => setNotice(`could not highlight links: ${errorText(e)}`, 'highlight'),
    );
    return;
  }
  if (info.menuItemId === NOT_RELEVANT_MENU_ID && tab?.id !== undefined) {
    openSidePanel(tab.id);
    markTabNotRelevant(tab.id).then(
      () => { if (noticeSource === 'classify') setNotice(null); },
      (e) => setNotice(`could not mark the page: ${errorText(e)}`, 'classify'),
    );
    return;
  }
  if (info.menuItemId !== MENU_ID || tab?.id === undefined) return;
  classifyTab(tab.id).then(
    () => { if (noticeSource === 'classify') setNotice(null); },
    (e) => setNotice(errorText(e), 'classify'),
  );
});

chrome.tabs.onUpdated.addListener((tabId, change, tab) => {
  if (change.status === 'complete') pageLoaded(tabId, tab).catch(() => {});
});

chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
  if (!msg || typeof msg.type !== 'string' || BROADCAST_TYPES.has(msg.type)) return undefined;
  if (sender.id !== chrome.runtime.id || !sender.url?.startsWith(chrome.runtime.getURL(''))) return undefined;
  handle(/** @type {UiRequest} */ (msg)).then(
    (result) => sendResponse({ ok: true, result }),
    (e) => sendResponse({ ok: false, error: errorText(e), detail: /** @type {any} */ (e)?.detail ?? '' }),
  );
  return true; // the answer comes asynchronously
});

// The user looked (opened the side panel, marked pages seen): the icon's count follows.
chrome.storage.onChanged.addListener((changes, area) => {
  if (area === 'local' && changes[SEEN_KEY] && port.connected) newsBadge.update().catch(() => {});
});

chrome.storage.session.get(LAST_KEY).then(
  (s) => { if (!last && s[LAST_KEY]) last = /** @type {{view: Classification, text: string}} */ (s[LAST_KEY]); },
  () => {},
);
port.start();

// For tests and the console: `forager.classifyTab(tabId)` etc. in the worker.
/** @type {any} */ (globalThis).forager = {
  classifyTab,
  handle,
  getState,
  setNotice,
  htmlText,
  port,
  models,
  crawl,
  /** @param {import('./lib/protocol.js').RequestType} type @param {any} [fields] */
  hostRequest: (type, fields) => port.request(type, fields),
  /** @param {string} text @param {{warmup?: number, runs?: number}} [options] */
  benchClassify: async (text, options) => benchClassify(await models.get(), text, options),
  highlighter,
  newsBadge,
  /** @param {number} links @param {{warmup?: number, runs?: number}} [options] */
  benchLinks: async (links, options) => benchLinks(await highlighter.model(), links, options),
};
