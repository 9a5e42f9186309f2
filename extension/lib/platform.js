// @ts-check
/**
 * The few places where Chromium and Firefox differ, behind one small adapter: the side panel
 * (Chromium's `sidePanel`, Firefox's `sidebarAction`) and reading fetched HTML (Chromium's
 * service worker has no DOM and asks an offscreen document; Firefox's event page has one).
 * Everything else is the same `chrome.*` API in both browsers.
 *
 * @module platform
 */

import { visibleText } from './visible-text.js';

/** Firefox serves extension pages from `moz-extension:` URLs. */
export const isFirefox = chrome.runtime.getURL('').startsWith('moz-extension:');

/**
 * Firefox's `sidebarAction`, typed for what Forager uses (not in @types/chrome).
 * @returns {{open(): Promise<void>} | null}
 */
function sidebarAction() {
  const b = /** @type {any} */ (globalThis).browser;
  return b?.sidebarAction ?? null;
}

/**
 * Opens the side panel (Chromium) or sidebar (Firefox). Call it before any `await` in a user
 * action's handler: both browsers open it only while the action still counts as one.
 * @param {{tabId?: number, windowId?: number}} where
 * @returns {Promise<void>}
 */
export function openPanel(where) {
  const sidebar = sidebarAction();
  if (sidebar) return sidebar.open();
  if (where.tabId !== undefined) return chrome.sidePanel.open({ tabId: where.tabId });
  if (where.windowId !== undefined) return chrome.sidePanel.open({ windowId: where.windowId });
  return Promise.reject(new Error('no tab or window to open the side panel in'));
}

/** @type {Promise<void> | null} the offscreen document, created once for all concurrent callers */
let offscreenReady = null;

/** Creates the offscreen document unless it exists; every caller awaits the same creation. */
function ensureOffscreen() {
  offscreenReady ??= (async () => {
    const contexts = await chrome.runtime.getContexts({ contextTypes: [chrome.runtime.ContextType.OFFSCREEN_DOCUMENT] });
    if (!contexts.length) {
      // createDocument resolves once the document has loaded, so its listener is registered.
      await chrome.offscreen.createDocument({ url: 'offscreen.html', reasons: [chrome.offscreen.Reason.DOM_PARSER],
        justification: 'extract the visible text of fetched bookmarked pages' });
    }
  })().catch((e) => {
    offscreenReady = null;
    throw e;
  });
  return offscreenReady;
}

/** Closes the offscreen document, if one was made (after an import); the next call makes it again. */
export async function closeHtmlReader() {
  if (!offscreenReady) return;
  await offscreenReady.catch(() => {});
  offscreenReady = null;
  await chrome.offscreen.closeDocument().catch(() => {});
}

/**
 * The visible text of an HTML document, by the same rule everywhere (lib/visible-text.js):
 * parsed here when this context has a DOM (Firefox's event page), else by the offscreen
 * document (Chromium's service worker).
 * @param {string} html
 * @returns {Promise<string>}
 */
export async function htmlText(html) {
  if (typeof DOMParser === 'function') {
    return visibleText(new DOMParser().parseFromString(html, 'text/html'));
  }
  await ensureOffscreen();
  const r = await chrome.runtime.sendMessage({ type: 'offscreen_text', html });
  if (!r?.ok) throw new Error(r?.error ?? 'no answer from the offscreen document');
  return r.text;
}

/**
 * How to install the host in this browser, for the "host not connected" help. Firefox reports
 * a missing host manifest and one that does not allow this add-on the same way ("No such
 * native application"), so its help names both things to check.
 * @returns {string}
 */
export function installAdvice() {
  if (!isFirefox) return 'Install it with "forager install --browser chromium" (or chrome), then Retry.';
  return 'Install it with "forager install --browser firefox", then Retry. If Firefox still says ' +
    '"No such native application", check that ~/.mozilla/native-messaging-hosts/org.forager.host.json ' +
    `exists (Firefox reads it there even when its profile is in ~/.config/mozilla) and that its ` +
    `"allowed_extensions" lists ${chrome.runtime.id}.`;
}
