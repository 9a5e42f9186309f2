// @ts-check
/**
 * The toolbar popup: the taxonomy tree with its edits, bookmark import, crawl controls and a
 * one-line status. All work is done by the service worker (lib/messages.js).
 */

import { onBroadcast, send } from './lib/messages.js';
import { installAdvice, openPanel } from './lib/platform.js';
import { MAX_DELAY, MAX_PAGES } from './lib/protocol.js';
import { TopicTree } from './lib/tree.js';
import { $, act, el, setEnabled, shortUrl, showHost, showNotice, statusText, wireNoticeDismiss } from './lib/ui.js';

/**
 * @typedef {import('./lib/messages.js').State} State
 * @typedef {import('./lib/protocol.js').TopicInfo} TopicInfo
 * @typedef {import('./lib/protocol.js').Status} Status
 */

/** @type {Status | null} */
let crawlStatus = null;
let hostConnected = false;

const tree = new TopicTree($('tree'), {
  onSelect: () => { showSelection(); act(null, showExamples); },
  onGood: (t, good) => act(null, async () => {
    try {
      showTopics((await send({ type: 'set_good', topic: t.id, good })).topics);
    } catch (e) {
      // Refused: the checkbox goes back to what the model says.
      showTopics((/** @type {State} */ (await send({ type: 'get_state' }))).model.topics);
      throw e;
    }
  }),
});
/** @type {number | undefined} this popup's window, for opening the side panel at once on click */
let windowId;
chrome.windows.getCurrent().then((w) => { windowId = w.id; }, () => {});

/** @param {string} id */
const input = (id) => /** @type {HTMLInputElement} */ ($(id));
/** @param {string} id */
const button = (id) => /** @type {HTMLButtonElement} */ ($(id));

/** Topics past which the popup offers a filter box. */
const FILTER_FROM = 20;
input('topic-filter').addEventListener('input', () => tree.setFilter(input('topic-filter').value));

/** @param {TopicInfo[]} topics */
function showTopics(topics) {
  tree.render(topics);
  // A filter box once the taxonomy is too long to scan.
  $('topic-filter').hidden = topics.length <= FILTER_FROM && !input('topic-filter').value;
  // Examples learned from a crawl can be forgotten whenever there are some.
  button('forget-learned').hidden = !topics.some((t) => (t.self_trained ?? 0) > 0);
  const move = /** @type {HTMLSelectElement} */ ($('move-target'));
  const keep = move.value;
  move.replaceChildren(...topics.map((t) => el('option', { value: String(t.id) }, t.path)));
  if (keep) move.value = keep;
  showSelection();
}

function showSelection() {
  showGuide();
  const t = tree.selectedTopic();
  $('selected-path').textContent = t?.path ?? '/';
  const isRoot = !t || t.id === t.parent;
  for (const id of ['rename-topic', 'move-topic', 'delete-topic', 'add-page', 'add-all-tabs']) setEnabled(button(id), !isRoot);
}

/** @type {string | null | undefined} why the host is not connected (Chrome's words) */
let hostError;
/** The host answered once since the browser started: a lost connection means it stopped. */
let hostSeen = false;
/** @type {number | null} pages fetched when the host stopped under a running crawl */
let interrupted = null;

function showStatus() {
  $('status-line').textContent = hostConnected ? statusText(crawlStatus)
    : hostSeen ? 'The Forager host stopped unexpectedly; reconnecting…'
      : `Crawling needs the Forager host. ${installAdvice()}`;
  // The browser's own words are the technical detail: on hover.
  $('status-line').title = !hostConnected && hostError ? `Details: ${hostError}` : '';
  $('interrupted').hidden = !hostConnected || interrupted === null;
  $('interrupted-text').textContent = `The crawl was interrupted at ${interrupted} pages when the host stopped.`;
  button('retry-host').hidden = hostConnected;
  const running = crawlStatus?.state === 'running' || crawlStatus?.state === 'stopping';
  const start = button('start-crawl');
  setEnabled(start, hostConnected);
  start.textContent = running ? 'Restart' : 'Start';
  start.title = running ? 'Stop the running crawl and start again with these seeds and options' : 'Start crawling';
  setEnabled(button('stop-crawl'), hostConnected && running);
  setEnabled(button('retry-failed'), hostConnected);
  setEnabled(button('new-crawl'), hostConnected && !running);
  // "New crawl: the previous one is kept as ..." is about the moment before this crawl.
  if (running && $('crawl-note').dataset.kind === 'new-crawl') {
    $('crawl-note').textContent = '';
    delete $('crawl-note').dataset.kind;
  }
  showGuide();
}

/** Whether an example was added from this browser since it started (the guide's step 2). */
let exampleAdded = false;
const GUIDE_KEY = 'guideExampleAdded';

/**
 * The first run as four steps, each saying what comes next: a topic, an example from the
 * current tab, the topic ticked good, Start. Shown until a crawl has fetched something.
 */
function showGuide() {
  const t = tree.selectedTopic();
  const topics = tree.topics ?? [];
  const chosen = Boolean(t && t.id !== t.parent);
  const goodPaths = topics.filter((x) => x.good).map((x) => x.path);
  const isGood = chosen && goodPaths.some((g) => t?.path === g || t?.path.startsWith(`${g}/`));
  const running = crawlStatus?.state === 'running' || crawlStatus?.state === 'stopping';
  /** @type {[boolean, string][]} */
  const steps = [
    [chosen, 'Choose your topic in the taxonomy below (click its name), or type a name and press "Add child".'],
    [exampleAdded, 'Open a web page about it in this tab and press "Add current page as example" (more pages teach it better).'],
    [isGood, 'Tick the box next to the topic: it becomes good, the topic the crawl looks for.'],
    [running, 'Press Start: the crawl begins from your examples (or from seed URLs you paste above it).'],
  ];
  const next = steps.findIndex(([done]) => !done);
  $('guide').hidden = (crawlStatus?.fetched ?? 0) > 0 || next === -1;
  $('guide-steps').replaceChildren(...steps.map(([done, text], i) => el('li',
    { class: done ? 'done' : i === next ? 'next' : '', 'data-done': String(done) },
    done ? `✓ ${text}` : i === next ? `Next: ${text}` : text)));
}

/** @param {State} s */
function showState(s) {
  showHost(s.host);
  hostConnected = s.host.connected;
  hostError = s.host.error;
  hostSeen = s.host.seen;
  interrupted = s.interrupted;
  crawlStatus = s.crawl;
  showDatabase(s.database);
  $('model-source').textContent = modelLabel(s.model.source, s.model.offlineEdits);
  showTopics(s.model.topics);
  showStatus();
  showGuide();
  showNotice(s.notice);
  $('import-status').textContent = s.importStatus;
  $('self-train-status').textContent = s.selfTrainStatus;
  button('grant-access').hidden = s.hostAccess;
  const o = s.crawlOptions;
  if (o.pages) input('budget').value = String(o.pages);
  if (o.proxy) input('proxy').value = o.proxy;
  if (o.delay !== undefined) input('delay').value = String(o.delay);
  if (o.apprentice !== undefined) input('apprentice').checked = o.apprentice;
  if (o.warc !== undefined) input('warc').checked = o.warc;
}

/**
 * @param {string} source
 * @param {number} offlineEdits
 */
function modelLabel(source, offlineEdits) {
  const from = { host: "host's model", cache: 'browser copy', starter: 'starter model', empty: 'empty model' };
  return `(${/** @type {any} */ (from)[source] ?? source}${offlineEdits ? `, ${offlineEdits} edits wait for the host` : ''})`;
}

/** @returns {TopicInfo} */
function selected() {
  const t = tree.selectedTopic();
  if (!t) throw new Error('select a topic first');
  return t;
}

function topicName() {
  const name = input('topic-name').value.trim();
  if (!name) throw new Error('type a topic name first');
  if (name.includes('/')) throw new Error('a topic name cannot contain "/"');
  return name;
}

/** @param {{topics: TopicInfo[], moved_from?: string}} r */
function edited(r) {
  showNotice(r.moved_from ? `moved: the page was an example of ${r.moved_from} until now` : null);
  showTopics(r.topics);
}

button('add-topic').addEventListener('click', () => act(button('add-topic'), async () => {
  const r = await send({ type: 'add_topic', parent: tree.selectedTopic()?.id ?? 0, name: topicName() });
  input('topic-name').value = '';
  // The new topic is selected: the next step is usually to give it examples.
  const made = r.topics.find((/** @type {TopicInfo} */ t) => t.id === r.id);
  if (made) tree.select(made);
  edited(r);
}));
button('rename-topic').addEventListener('click', () => act(button('rename-topic'), async () => {
  edited(await send({ type: 'rename_topic', topic: selected().id, name: topicName() }));
  input('topic-name').value = '';
}));
button('move-topic').addEventListener('click', () => act(button('move-topic'), async () => {
  const parent = Number(/** @type {HTMLSelectElement} */ ($('move-target')).value);
  edited(await send({ type: 'move_topic', topic: selected().id, parent }));
}));
button('delete-topic').addEventListener('click', () => act(button('delete-topic'), async () => {
  const t = selected();
  if (!confirm(`Delete ${t.path} with its subtree and ${t.subtree_examples} examples?`)) return;
  edited(await send({ type: 'delete_topic', topic: t.id }));
}));
button('add-page').addEventListener('click', () => act(button('add-page'), async () => {
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
  edited(await send({ type: 'add_tab_example', topic: selected().id, tabId: tab?.id }));
  exampleAdded = true;
  chrome.storage.session.set({ [GUIDE_KEY]: true }).catch(() => {});
  showGuide();
}));
// The import runs in the worker (it goes on if the popup closes); its progress comes as broadcasts.
button('import-bookmarks').addEventListener('click', () => act(button('import-bookmarks'), async () => {
  // Under the selected topic (the root when none is), folder tree and all.
  await send({ type: 'import_bookmarks', parent: tree.selectedTopic()?.id ?? 0 });
  const s = /** @type {State} */ (await send({ type: 'get_state' }));
  showTopics(s.model.topics);
}));

// The worker runs "Learn from the crawl" and reports it (also to a popup opened later).
button('self-train').addEventListener('click', () => act(button('self-train'), async () => {
  await send({ type: 'self_train' });
  const s = /** @type {State} */ (await send({ type: 'get_state' }));
  showTopics(s.model.topics);
}));
button('forget-learned').addEventListener('click', () => act(button('forget-learned'), async () => {
  await send({ type: 'self_train', clear: true });
  const s = /** @type {State} */ (await send({ type: 'get_state' }));
  showTopics(s.model.topics);
}));

/**
 * Reads one Advanced field: null when empty (the host's default), else `parse`'s value. A
 * refusal is shown under the field, which is opened and focused, and stops the start.
 * @template T
 * @param {string} id
 * @param {(raw: string) => {value: T} | {error: string}} parse
 * @returns {T | null}
 */
function field(id, parse) {
  const box = input(id);
  const raw = box.value.trim();
  const r = box.validity.badInput ? { error: 'not a number' } : raw === '' ? { value: null } : parse(raw);
  const message = 'error' in r ? r.error : '';
  $(`${id}-error`).textContent = message;
  box.setAttribute('aria-invalid', String(Boolean(message)));
  if ('error' in r) {
    /** @type {HTMLDetailsElement} */ ($('advanced')).open = true;
    box.focus();
    throw new Error(`${box.labels?.[0]?.textContent?.trim() ?? id}: ${message}`);
  }
  return r.value;
}

/** The Advanced options, checked as the host checks them; throws on the first bad one. */
function crawlOptions() {
  const pages = field('budget', (raw) => {
    const n = Number(raw);
    return Number.isInteger(n) && n >= 1 && n <= MAX_PAGES ? { value: n }
      : { error: `a whole number of pages from 1 to ${MAX_PAGES.toLocaleString('en')}` };
  });
  const proxy = field('proxy', (raw) => {
    try {
      const u = new URL(raw);
      if (u.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)) return { value: raw };
    } catch { /* not a URL */ }
    return { error: 'a proxy on this computer: http://127.0.0.1:PORT' };
  });
  const delay = field('delay', (raw) => {
    const n = Number(raw);
    return Number.isFinite(n) && n >= 0 && n <= MAX_DELAY ? { value: n } : { error: `seconds from 0 to ${MAX_DELAY}` };
  });
  return { pages, proxy, delay };
}

button('start-crawl').addEventListener('click', () => act(button('start-crawl'), async () => {
  const seeds = /** @type {HTMLTextAreaElement} */ ($('seeds')).value.split(/\s+/).filter((u) => u);
  const bad = seeds.filter((u) => !/^https?:\/\/[^/\s]+/i.test(u));
  if (bad.length) throw new Error(`seeds must be http(s) URLs: ${bad.slice(0, 3).join(', ')}${bad.length > 3 ? ', …' : ''}`);
  // An empty field is sent as null: the worker forgets the value it remembered.
  const { pages, proxy, delay } = crawlOptions();
  // Only seeds typed here may be on this computer or the local network; the user says so first.
  const local = seeds.filter(isLocal);
  if (local.length && privateOk !== seeds.join(' ')) {
    privateOk = seeds.join(' ');
    throw new Error(`${local.map((u) => new URL(u).host).join(', ')} ${local.length === 1 ? 'is' : 'are'} on this ` +
      'computer or your local network. Press Start again to crawl it anyway.');
  }
  const restart = crawlStatus?.state === 'running' || crawlStatus?.state === 'stopping';
  const r = await send({ type: 'start_crawl', seeds, apprentice: input('apprentice').checked,
    warc: input('warc').checked, pages, proxy, delay });
  crawlStatus = r.status;
  showNotice(null);
  const from = seeds.length ? `${seeds.length} seed${seeds.length === 1 ? '' : 's'}` : "your good topics' examples";
  $('crawl-note').textContent = restart ? `Restarted: the crawl stopped and began again from ${from}.`
    : `Started from ${from}${r.queued ? `; ${r.queued} links queued first` : ''}.`;
  $('crawl-note').dataset.kind = 'started';
  showStatus();
}));

/** The seeds Start was pressed twice for (a local or private seed needs that). */
let privateOk = '';

/**
 * Whether a URL's host is this computer or a private network (as the host's `Reach` judges).
 * @param {string} url
 */
function isLocal(url) {
  let h;
  try { h = new URL(url).hostname.replace(/^\[|\]$/g, ''); } catch { return false; }
  return h === 'localhost' || h.endsWith('.localhost') || h.endsWith('.local') || h === '::1' ||
    /^127\./.test(h) || /^10\./.test(h) || /^192\.168\./.test(h) || /^169\.254\./.test(h) ||
    /^172\.(1[6-9]|2\d|3[01])\./.test(h) || /^0\./.test(h) || /^f[cd][0-9a-f]{2}:/i.test(h) || /^fe80:/i.test(h);
}
button('retry-failed').addEventListener('click', () => act(button('retry-failed'), async () => {
  // The remembered options and a fresh proxy value, as Start would send them.
  const { proxy } = crawlOptions();
  const r = await send({ type: 'start_crawl', seeds: [], retry_failed: true, proxy });
  crawlStatus = r.status;
  $('crawl-note').textContent = `${r.retried ?? 0} failed URL${r.retried === 1 ? '' : 's'} back in the frontier`;
  showNotice(null);
  showStatus();
}));
/** Lists the selected topic's examples (when the Examples section is open), each removable
 * and movable to the topic chosen in the Move list. */
async function showExamples() {
  const box = /** @type {HTMLDetailsElement} */ ($('examples'));
  const t = tree.selectedTopic();
  if (!box.open || !t) return;
  if (!hostConnected) {
    $('example-list').replaceChildren();
    $('examples-note').textContent = 'listing examples needs the host';
    return;
  }
  const r = await send({ type: 'examples', topic: t.id });
  $('examples-note').textContent = r.examples.length === 0 ? `${t.path} has no examples of its own`
    : r.truncated ? `the first ${r.examples.length} examples` : `${r.examples.length} examples`;
  $('example-list').replaceChildren(...r.examples.map((/** @type {import('./lib/protocol.js').ExampleInfo} */ e) => {
    const remove = el('button', { class: 'small-button remove-example', 'aria-label': `remove example ${e.url}` }, 'remove');
    remove.addEventListener('click', () => act(remove, async () => {
      showTopics((await send({ type: 'remove_example', url: e.url })).topics);
      await showExamples();
    }));
    const move = el('button', { class: 'small-button move-example', 'aria-label': `move example ${e.url}`,
      title: 'Move it to the topic chosen in the Move list above' }, 'move');
    move.addEventListener('click', () => act(move, async () => {
      const to = Number(/** @type {HTMLSelectElement} */ ($('move-target')).value);
      showTopics((await send({ type: 'move_example', url: e.url, topic: to })).topics);
      await showExamples();
    }));
    const link = el('a', { href: e.url, title: e.url, target: '_blank' }, e.url.replace(/^https?:\/\//, ''));
    return el('li', { 'data-url': e.url }, link, ...(e.self_trained ? [el('span', { class: 'count' }, 'learned')] : []),
      remove, move);
  }));
}
$('examples').addEventListener('toggle', () => act(null, showExamples));

button('add-all-tabs').addEventListener('click', () => act(button('add-all-tabs'), async () => {
  const t = selected();
  /** @type {{added: number, fates: {url: string, fate: string}[]}} */
  const r = await send({ type: 'add_all_tabs', topic: t.id });
  // One line per tab: what became of it.
  $('import-status').replaceChildren(
    el('div', {}, `${r.added} of ${r.fates.length} open tab${r.fates.length === 1 ? '' : 's'} added to ${t.path}:`),
    el('ul', { class: 'fates' }, ...r.fates.map((f) => el('li', { 'data-url': f.url }, `${shortUrl(f.url)}: ${f.fate}`))));
  const s = /** @type {State} */ (await send({ type: 'get_state' }));
  showTopics(s.model.topics);
}));
/**
 * Says where the crawl lives.
 * @param {string | null} database
 */
function showDatabase(database) {
  const shared = /^postgres(ql)?:\/\//i.test(database ?? '');
  $('shared-db-note').textContent = shared ? `Crawling on ${database}` : 'Crawling on this computer';
  $('shared-db-note').dataset.shared = String(shared);
}
button('use-db').addEventListener('click', () => act(button('use-db'), async () => {
  const url = input('shared-db').value.trim();
  const r = await send({ type: 'set_crawl_db', url: url || null });
  crawlStatus = r.status;
  input('shared-db').value = '';
  showNotice(null);
  showDatabase(r.database);
  showStatus();
}));
button('new-crawl').addEventListener('click', () => act(button('new-crawl'), async () => {
  const r = await send({ type: 'new_crawl' });
  crawlStatus = r.status;
  $('crawl-note').textContent = r.kept
    ? `New crawl: the previous one is kept as ${r.kept.split('/').pop()}; Start begins afresh`
    : 'New crawl: Start begins afresh';
  $('crawl-note').dataset.kind = 'new-crawl';
  showStatus();
}));
button('stop-crawl').addEventListener('click', () => act(button('stop-crawl'), async () => {
  crawlStatus = (await send({ type: 'stop_crawl' })).status;
  showStatus();
}));

button('grant-access').addEventListener('click', () => act(button('grant-access'), async () => {
  const granted = await chrome.permissions.request({ origins: ['<all_urls>'] });
  button('grant-access').hidden = granted;
}));
button('open-panel').addEventListener('click', () => act(button('open-panel'), async () => {
  // No await before open(): the browser opens the side panel (Firefox: the sidebar) only while
  // the click still counts as a user gesture.
  if (windowId === undefined) throw new Error('no browser window to open the side panel in');
  await openPanel({ windowId });
}));
button('highlight-page').addEventListener('click', () => act(button('highlight-page'), async () => {
  // The side panel opens first, while the click counts as a user gesture; it lists the links.
  const opening = windowId === undefined ? Promise.resolve() : openPanel({ windowId }).catch(() => {});
  await send({ type: 'highlight_links' });
  await opening;
}));
button('resume-crawl').addEventListener('click', () => act(button('resume-crawl'), async () => {
  // No seeds: the host resumes the crawl database, with the remembered options.
  const r = await send({ type: 'start_crawl', seeds: [] });
  crawlStatus = r.status;
  interrupted = null;
  showStatus();
}));
button('retry-host').addEventListener('click', () => act(button('retry-host'), async () => {
  await send({ type: 'reconnect' });
}));
wireNoticeDismiss((text) => send({ type: 'dismiss_notice', text }));

onBroadcast((b) => {
  switch (b.type) {
    case 'host_state':
      showHost(b.host);
      hostConnected = b.host.connected;
      hostError = b.host.error;
      hostSeen = b.host.seen;
      interrupted = b.interrupted;
      if (b.crawl) crawlStatus = b.crawl;
      showStatus();
      break;
    case 'host_event':
      if (b.event.type === 'progress' || b.event.type === 'crawl_stopped') {
        crawlStatus = b.event.status;
        showStatus();
      }
      break;
    case 'topics_changed':
      showTopics(b.topics);
      $('model-source').textContent = modelLabel(b.source, b.offlineEdits);
      break;
    case 'notice': showNotice(b.notice); break;
    case 'import_status': $('import-status').textContent = b.text; break;
    case 'self_train_status': $('self-train-status').textContent = b.text; break;
    default: break;
  }
});

// Typed seeds survive the popup closing (a click outside closes it) until the browser restarts.
const SEEDS_DRAFT_KEY = 'seedsDraft';
const seedsBox = /** @type {HTMLTextAreaElement} */ ($('seeds'));
seedsBox.addEventListener('input', () => {
  chrome.storage.session.set({ [SEEDS_DRAFT_KEY]: seedsBox.value }).catch(() => {});
});

act(null, async () => {
  showState(await send({ type: 'get_state' }));
  exampleAdded = Boolean((await chrome.storage.session.get(GUIDE_KEY))[GUIDE_KEY]);
  showGuide();
  const draft = (await chrome.storage.session.get(SEEDS_DRAFT_KEY))[SEEDS_DRAFT_KEY];
  if (typeof draft === 'string' && !seedsBox.value) seedsBox.value = draft;
  document.body.dataset.ready = 'true';
});
