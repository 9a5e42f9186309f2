// @ts-check
/**
 * The offscreen document: the service worker has no DOMParser, so it sends fetched HTML here
 * and gets the visible text back, by the same rule as everywhere else (lib/visible-text.js).
 */

import { visibleText } from './lib/visible-text.js';

chrome.runtime.onMessage.addListener((msg, _sender, sendResponse) => {
  if (msg?.type !== 'offscreen_text' || typeof msg.html !== 'string') return undefined;
  try {
    sendResponse({ ok: true, text: visibleText(new DOMParser().parseFromString(msg.html, 'text/html')) });
  } catch (e) {
    sendResponse({ ok: false, error: String(e) });
  }
  return undefined;
});
