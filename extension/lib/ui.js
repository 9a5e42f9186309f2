// @ts-check
/**
 * Small DOM helpers shared by the popup and the side panel.
 *
 * @module ui
 */

/**
 * @typedef {import('./protocol.js').Status} Status
 * @typedef {import('./protocol.js').ConnectionState} ConnectionState
 */

/**
 * Creates an element with attributes (`class`, `data-*`, properties such as `checked`) and
 * children (strings become text).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, any>} [attrs]
 * @param {(Node | string | null | undefined)[]} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = String(v);
    else if (k.startsWith('data-') || k === 'title' || k === 'role' || k.startsWith('aria-')) e.setAttribute(k, String(v));
    else /** @type {any} */ (e)[k] = v;
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

/**
 * A link that opens `url` in a new tab (an extension page must not navigate itself away).
 * @param {string} url
 * @param {(Node | string | null | undefined)[]} children
 * @returns {HTMLAnchorElement}
 */
export function tabLink(url, ...children) {
  const a = el('a', { href: url, title: url }, ...children);
  a.addEventListener('click', (e) => { e.preventDefault(); chrome.tabs.create({ url }); });
  return a;
}

/**
 * A URL as people read it: host and path, without the scheme (the URL itself if unparsable).
 * @param {string} url
 */
export function shortUrl(url) {
  try {
    const u = new URL(url);
    return u.host + (u.pathname === '/' ? '' : u.pathname);
  } catch {
    return url;
  }
}

/**
 * @param {string} id
 * @returns {HTMLElement}
 */
export function $(id) {
  const e = document.getElementById(id);
  if (!e) throw new Error(`#${id} missing`);
  return e;
}

/**
 * Shows the host's connection in `#host-status` (text, `data-connected`, tooltip).
 * @param {ConnectionState} host
 */
export function showHost(host) {
  const e = $('host-status');
  // When the connection was lost (data-last-disconnect: ms since the epoch; tests read it).
  if (!host.connected && e.dataset.connected === 'true') e.dataset.lastDisconnect = String(Date.now());
  e.dataset.connected = String(host.connected);
  e.textContent = host.connected ? 'host connected' : host.connecting ? 'connecting to host…' : 'host not connected';
  e.title = host.connected ? `${host.host ?? ''}` : (host.error ?? '');
}

/**
 * "running · fetched 12 · frontier 300 · 2.5 pages/s" (or "no crawl yet").
 * @param {Status | null} s
 */
export function statusText(s) {
  if (!s) return 'no crawl status';
  const live = s.state === 'running' || s.state === 'stopping';
  return `${s.state} · fetched ${s.fetched} · frontier ${s.frontier} · ${fixed(s.pages_per_sec, 1)} pages/s` +
    (s.errors ? ` · ${s.errors} given up` : '') + (live && s.paused ? ` · paused: ${s.paused}` : '') +
    (live && !s.paused && s.waiting ? ` · ${waitingText(s.waiting)}` : '');
}

/**
 * "waiting 40 s for 3 failing hosts"
 * @param {{secs: number, hosts: number}} w
 */
export function waitingText(w) {
  return `waiting ${Math.round(w.secs)} s for ${w.hosts} failing host${w.hosts === 1 ? '' : 's'}`;
}

/**
 * @param {number | null | undefined} x
 * @param {number} digits
 */
export function fixed(x, digits) {
  return typeof x === 'number' && Number.isFinite(x) ? x.toFixed(digits) : '–';
}

/**
 * Shows an error or notice in `#notice` (hidden when empty); the technical detail, if any, is its
 * tooltip.
 * @param {string | null} text
 * @param {string} [detail]
 */
export function showNotice(text, detail = '') {
  $('notice-text').textContent = text ?? '';
  $('notice-text').title = detail ? `Details: ${detail}` : '';
  $('notice').hidden = !text;
}

/**
 * Makes the notice's ✕ hide it, and tell the worker, which forgets it if it is its own notice
 * (so it does not come back when a page opens again).
 * @param {(text: string) => Promise<unknown>} dismissInWorker
 */
export function wireNoticeDismiss(dismissInWorker) {
  $('notice-dismiss').addEventListener('click', () => {
    const text = $('notice-text').textContent ?? '';
    showNotice(null);
    dismissInWorker(text).catch(() => {});
  });
}

/**
 * Runs an async UI action with its button disabled, showing a failure in `#notice`.
 * @param {HTMLButtonElement | HTMLInputElement | null} button
 * @param {() => Promise<unknown>} fn
 */
export async function act(button, fn) {
  if (button) button.disabled = true;
  try {
    await fn();
  } catch (e) {
    showNotice(e instanceof Error ? e.message : String(e), /** @type {any} */ (e)?.detail ?? '');
  } finally {
    // A button whose state the page sets (Stop while no crawl runs) stays as that state says.
    if (button) button.disabled = button.dataset.enabled === 'false';
  }
}

/**
 * Enables or disables a button by the page's state; an action under way on it ({@link act}) leaves
 * it so when it ends, rather than enabling it again.
 * @param {HTMLButtonElement} button
 * @param {boolean} on
 */
export function setEnabled(button, on) {
  button.dataset.enabled = String(on);
  button.disabled = !on;
}

/** Keys of the "Details" disclosures the user opened: they stay open when their list is redrawn. */
const openedDetails = new Set();

/**
 * A "Details" disclosure holding the technical detail of a sentence: one click (or Enter or
 * Space on its focused summary) away, and kept open across redraws of its list.
 * @param {string} key what it is about (a host, an alarm kind), unique in the page
 * @param {(Node | string | null | undefined)[]} children the detail
 * @returns {HTMLDetailsElement}
 */
export function detailsBox(key, ...children) {
  const d = el('details', { class: 'tech', 'data-key': key }, el('summary', {}, 'Details'),
    el('div', { class: 'tech-text' }, ...children));
  d.open = openedDetails.has(key);
  d.addEventListener('toggle', () => {
    if (d.open) openedDetails.add(key);
    else openedDetails.delete(key);
  });
  return d;
}
