// @ts-check
/**
 * The side panel's "Best next links" (the promising links of the page being read, each
 * queueable for the crawl) and its classify-as-you-browse switches.
 *
 * @module links-view
 */

import { send } from './messages.js';
import { httpOrigin } from './browse.js';
import { $, act, el, shortUrl, showNotice, tabLink } from './ui.js';

/**
 * @typedef {import('./highlight.js').Highlight} Highlight
 * @typedef {import('./browse.js').BrowseSettings} BrowseSettings
 */

/** @param {string} id */
const button = (id) => /** @type {HTMLButtonElement} */ ($(id));
/** @param {string} id */
const checkbox = (id) => /** @type {HTMLInputElement} */ ($(id));

/** @type {Highlight | null} */
let shown = null;
/** @type {string[]} */
let sites = [];
/** @type {BrowseSettings} */
let browse = { on: false, offSites: [] };
/** @type {string | null} the site of the last classified page */
let classifiedOrigin = null;

/**
 * Shows the best next links of the last highlighted page (or none).
 * @param {Highlight | null} h
 */
export function showBestLinks(h) {
  shown = h;
  button('clear-highlights').hidden = !h;
  $('best-links-actions').hidden = !h || h.links.length === 0;
  $('highlight-info').textContent = !h ? '' : `${h.marked} of ${h.scored} links marked on ${shortUrl(h.url)}, ` +
    (h.rule === 'apprentice'
      ? `scored by the crawl's apprentice (${(h.instances ?? []).reduce((a, b) => a + b, 0)} links learned)`
      : 'scored by the words around each link (no crawl has trained the apprentice yet)') +
    ` in ${h.ms.toFixed(1)} ms` +
    (h.leftOut ? `; ${h.leftOut} already fetched by the crawl left out` : '');
  $('best-links').replaceChildren(...(h?.links ?? []).map((l) => {
    const a = tabLink(l.url, l.anchor || shortUrl(l.url), el('span', { class: 'url' },
      [l.fetched ? 'already fetched' : l.topic, l.menu ? 'site menu' : ''].filter(Boolean).join(' · ')));
    const q = el('button', { class: 'queue small-button', title: 'put this link at the head of the crawl\'s frontier',
      'aria-label': `queue ${l.anchor || shortUrl(l.url)} for the crawl` }, 'queue');
    q.addEventListener('click', () => act(q, () => queue([l.url], q)));
    if (l.fetched) { q.disabled = true; q.textContent = 'fetched'; }
    return el('li', { 'data-url': l.url, 'data-score': l.score, 'data-fetched': l.fetched ? 'true' : null,
      'data-menu': l.menu ? 'true' : null }, a,
      el('span', { class: 'score', title: 'predicted relevance of the page it leads to' }, l.score.toFixed(2)), q);
  }));
  const site = h ? httpOrigin(h.url) : null;
  $('highlight-site-name').textContent = site ? shortUrl(site) : '';
  checkbox('highlight-site').checked = Boolean(site && sites.includes(site));
}

/**
 * Queues `urls` for the crawl and says, one line per link, what happened to each: queued, or
 * not queued because the crawl fetched it (or gave up on it) already.
 * @param {string[]} urls
 * @param {HTMLButtonElement} b
 */
async function queue(urls, b) {
  /** @type {{queued: number, running: boolean, fates?: import('./protocol.js').LinkFate[]}} */
  const r = await send({ type: 'queue_links', urls });
  showNotice(null);
  const fates = r.fates ?? [];
  b.textContent = r.queued ? 'queued' : 'not queued';
  b.disabled = true;
  const where = r.running ? "at the head of the running crawl's frontier" : 'for the next crawl';
  $('highlight-info').replaceChildren(
    r.queued ? `${r.queued} link${r.queued === 1 ? '' : 's'} queued ${where}` : 'Nothing queued',
    ...(fates.length > 1 || r.queued === 0 ? [el('ul', { class: 'fates' }, ...fates.map((f) =>
      el('li', { 'data-url': f.url, 'data-fate': f.fate }, `${shortUrl(f.url)}: ${f.why}`)))] : []));
  for (const f of fates) {
    const li = document.querySelector(`#best-links li[data-url="${CSS.escape(f.url)}"]`);
    if (li) li.setAttribute('data-fate', f.fate);
  }
}

/**
 * Shows the classify-as-you-browse switches for the last classified page's site.
 * @param {BrowseSettings} b
 * @param {string | null} pageUrl
 */
export function showBrowse(b, pageUrl) {
  browse = b;
  classifiedOrigin = pageUrl ? httpOrigin(pageUrl) : classifiedOrigin;
  checkbox('browse-on').checked = b.on;
  $('browse-site-label').hidden = !b.on || !classifiedOrigin;
  $('browse-site').textContent = classifiedOrigin ? shortUrl(classifiedOrigin) : '';
  checkbox('browse-off-site').checked = Boolean(classifiedOrigin && b.offSites.includes(classifiedOrigin));
}

/**
 * Wires the section's controls.
 * @param {{highlightSites: string[], browse: BrowseSettings, highlight: Highlight | null}} state
 */
export function wireLinks(state) {
  sites = state.highlightSites;
  showBestLinks(state.highlight);
  showBrowse(state.browse, null);
  button('highlight').addEventListener('click', () => act(button('highlight'), async () => {
    showBestLinks(await send({ type: 'highlight_links' }));
  }));
  button('clear-highlights').addEventListener('click', () => act(button('clear-highlights'), async () => {
    await send({ type: 'clear_highlights', tabId: shown?.tabId });
    showBestLinks(null);
  }));
  button('queue-all').addEventListener('click', () => act(button('queue-all'),
    () => queue((shown?.links ?? []).map((l) => l.url), button('queue-all'))));
  checkbox('highlight-site').addEventListener('change', () => act(null, async () => {
    const site = shown ? httpOrigin(shown.url) : null;
    const box = checkbox('highlight-site');
    if (!site) return;
    // Asked on the click itself (a user gesture), before anything is awaited.
    const allowed = !box.checked || await chrome.permissions.request({ origins: [`${site}/*`] });
    if (!allowed) { box.checked = false; return; }
    sites = await send({ type: 'set_highlight_site', origin: site, on: box.checked });
  }));
  checkbox('browse-on').addEventListener('change', () => act(null, async () => {
    const box = checkbox('browse-on');
    const allowed = !box.checked || await chrome.permissions.request({ origins: ['<all_urls>'] });
    if (!allowed) {
      box.checked = false;
      showNotice('Classifying as you browse needs permission to read the pages you visit.');
      return;
    }
    showBrowse(await send({ type: 'set_browse', on: box.checked }), null);
  }));
  checkbox('browse-off-site').addEventListener('change', () => act(null, async () => {
    if (!classifiedOrigin) return;
    showBrowse(await send({ type: 'set_browse_site', origin: classifiedOrigin,
      off: checkbox('browse-off-site').checked }), null);
  }));
}

/** @returns {BrowseSettings} */
export function browseShown() {
  return browse;
}
