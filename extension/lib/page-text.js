// @ts-check
/**
 * The visible text of a tab, read with `chrome.scripting.executeScript` running
 * `visibleText` itself in the page (the same rule as the host's extractor).
 *
 * Access: `activeTab` covers a tab after the user clicked the context menu item or the toolbar
 * button on it; anything else (e.g. "Classify current tab" from the side panel) needs the
 * optional `<all_urls>` host permission, which the popup requests on the user's click.
 *
 * @module page-text
 */

import { errorText } from './protocol.js';
import { visibleText } from './visible-text.js';

/** Longest text (characters) sent to the host as an example: browser-to-host frames stop at 4 MB. */
export const MAX_EXAMPLE_CHARS = 1_000_000;

/**
 * @param {number} tabId
 * @returns {Promise<{url: string, title: string, text: string}>}
 */
export async function tabText(tabId) {
  /** @type {chrome.scripting.InjectionResult<string>[]} */
  let results;
  try {
    results = await chrome.scripting.executeScript({ target: { tabId }, func: visibleText });
  } catch (e) {
    throw new Error(`Forager cannot read this tab (${errorText(e)}). Browser pages, the extension store ` +
      'and PDF viewers cannot be read by any extension; on other pages use "Classify this page" from ' +
      'the page\'s context menu, or allow Forager to read pages (popup).');
  }
  const text = results?.[0]?.result;
  if (typeof text !== 'string') throw new Error('the page gave no text');
  const tab = await chrome.tabs.get(tabId);
  return { url: tab.url ?? '', title: tab.title ?? '', text };
}
