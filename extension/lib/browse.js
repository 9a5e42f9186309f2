// @ts-check
/**
 * Classify as you browse (opt-in): with the user's permission to read pages, each page the
 * user visits is classified in WebAssembly when it loads, and the toolbar badge shows its
 * relevance to the good topics (the tooltip names the best topic). Nothing goes to the host
 * unless the user acts (the side panel's "Add as example", "Not relevant"). Pages in private
 * windows are never read; the user can turn it off per site.
 *
 * @module browse
 */

const ON_KEY = 'browseClassify';
const OFF_SITES_KEY = 'browseOffSites';

/**
 * @typedef {{on: boolean, offSites: string[]}} BrowseSettings
 */

/** @returns {Promise<BrowseSettings>} */
export async function browseSettings() {
  const s = await chrome.storage.local.get([ON_KEY, OFF_SITES_KEY]);
  return { on: s[ON_KEY] === true, offSites: Array.isArray(s[OFF_SITES_KEY]) ? s[OFF_SITES_KEY] : [] };
}

/**
 * Turns classify-as-you-browse on or off.
 * @param {boolean} on
 */
export async function setBrowseClassify(on) {
  await chrome.storage.local.set({ [ON_KEY]: on });
  return browseSettings();
}

/**
 * Turns it off (or back on) for one site.
 * @param {string} origin
 * @param {boolean} off
 */
export async function setBrowseOffSite(origin, off) {
  const sites = new Set((await browseSettings()).offSites);
  if (off) sites.add(origin); else sites.delete(origin);
  await chrome.storage.local.set({ [OFF_SITES_KEY]: [...sites] });
  return browseSettings();
}

/**
 * The origin of an http(s) URL, or null for any other page.
 * @param {string | undefined} url
 */
export function httpOrigin(url) {
  try {
    const u = new URL(url ?? '');
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : null;
  } catch {
    return null;
  }
}

/**
 * Whether a loaded tab is to be classified, with classify-as-you-browse on (`settings`): the
 * page is http(s) and not in a private window, its site is not turned off, and Forager may
 * read it.
 * @param {chrome.tabs.Tab} tab
 * @param {BrowseSettings} settings
 * @returns {Promise<boolean>}
 */
export async function shouldClassify(tab, settings) {
  const origin = httpOrigin(tab.url);
  if (!origin || tab.incognito || tab.id === undefined || settings.offSites.includes(origin)) return false;
  return chrome.permissions.contains({ origins: [`${origin}/*`] });
}

/**
 * Shows a page's relevance on the toolbar badge of its tab: a percentage, and the best topic in
 * the tooltip; `null` clears it (the icon's own badge, the count of what is new, shows again).
 * @param {number} tabId
 * @param {{relevance: number, best_leaf: string, none: boolean} | null} c
 */
export async function showBadge(tabId, c) {
  if (!c) {
    await chrome.action.setTitle({ tabId, title: 'Forager' });
    // Back to the icon's own badge (the count of what is new).
    // (`null` resets a tab's text to the icon's; the typings know only strings.)
    await chrome.action.setBadgeText(/** @type {any} */ ({ tabId, text: null }));
    return;
  }
  const pct = Math.round(c.relevance * 100);
  // Tooltip and colour first, the figure last: whoever sees the figure sees its tooltip.
  await chrome.action.setTitle({ tabId, title: c.none
    ? `Forager: ${pct}% relevant; about none of your topics (nearest ${c.best_leaf})`
    : `Forager: ${pct}% relevant; best topic ${c.best_leaf}` });
  await chrome.action.setBadgeBackgroundColor({ tabId, color: pct >= 50 ? '#2b8a3e' : '#868e96' });
  await chrome.action.setBadgeText({ tabId, text: String(pct) });
}
