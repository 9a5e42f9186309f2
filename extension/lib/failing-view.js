// @ts-check
/**
 * The side panel's failing hosts: which hosts of the crawl fail and why, in words, with one of
 * their URLs, the technical detail (the error kind as recorded, the whole URL) one click away
 * under "Details", and what the crawl waits for while only their URLs are left.
 *
 * @module failing-view
 */

import { detailsBox, el, shortUrl, tabLink, waitingText } from './ui.js';

/**
 * @typedef {import('./protocol.js').Status} Status
 * @typedef {import('./protocol.js').HostTrouble} HostTrouble
 */

/**
 * One failing host: "a.test — unknown host: ... (a.test/x)", retry time if it waits.
 * @param {HostTrouble} t
 * @param {boolean} live the crawl runs (a retry time means nothing once it ended)
 */
function troubleItem(t, live) {
  const retry = live && typeof t.retry_in === 'number' ? `; tried again in ${Math.round(t.retry_in)} s` : '';
  const wait = live && typeof t.retry_in === 'number' ? `; backoff ${t.retry_in.toFixed(1)} s left` : '';
  return el('li', { 'data-host': t.host, 'data-kind': t.kind },
    el('b', {}, t.host), ` — ${t.why}${retry} `, tabLink(t.url, shortUrl(t.url)),
    detailsBox(`host:${t.host}`, 'error kind (as the crawl database records it): ', el('code', {}, t.kind),
      el('br'), 'URL: ', el('code', {}, t.url), wait));
}

/**
 * Shows the failing hosts of `s` in `box` (a `<details>` with a `<summary>` and a `<ul>`).
 * @param {HTMLDetailsElement} box
 * @param {Status | null} s
 */
export function showFailing(box, s) {
  const list = Array.isArray(s?.failing) ? s.failing : [];
  const total = Math.max(s?.failing_hosts ?? 0, list.length);
  box.hidden = total === 0;
  if (box.hidden) return;
  const live = s?.state === 'running' || s?.state === 'stopping';
  const summary = /** @type {HTMLElement} */ (box.querySelector('summary'));
  summary.textContent = `${total} failing host${total === 1 ? '' : 's'}` +
    (live && s?.waiting ? `: ${waitingText(s.waiting)}` : '');
  const more = total - list.length;
  /** @type {HTMLElement} */ (box.querySelector('ul')).replaceChildren(...list.map((x) => troubleItem(x, live)),
    ...(more > 0 ? [el('li', { class: 'small' }, `and ${more} more`)] : []));
  // Open while nothing was fetched: then these hosts are the whole story.
  if ((s?.fetched ?? 0) === 0) box.open = true;
}
