// @ts-check
/**
 * Visible text of a page or of part of one, as the Forager extension feeds it to the classifier.
 *
 * Plain DOM walking with no dependencies, so it runs in a content script, in an extension page
 * (on a document from DOMParser) and in tests alike. It mirrors what the native host's HTML
 * extractor keeps: the text nodes outside script, style, noscript, template and head, joined with
 * single spaces.
 *
 * `visibleText` is self-contained (no reference to anything outside its own body), so the
 * service worker can inject this very function into a tab with
 * `chrome.scripting.executeScript({target, func: visibleText})`: called there without an
 * argument it reads the tab's `document`. One rule, one copy.
 *
 * @module visible-text
 */

/**
 * Returns the visible text of a document or element: its text nodes in document order, outside
 * `script`, `style`, `noscript`, `template` and `head`, with every run of whitespace collapsed to
 * one space and none at either end.
 *
 * @param {Document | Element} [root] the page (`document`, the default) or an element of one
 * @returns {string} the text, possibly empty
 */
export function visibleText(root = document) {
  // Everything the walk needs lives in here: the function is also serialised by executeScript.
  /** Elements whose contents are never visible text. */
  const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'head']);
  const ELEMENT_NODE = 1;
  const TEXT_NODE = 3;
  const CDATA_SECTION_NODE = 4;
  const DOCUMENT_NODE = 9;
  /**
   * Whether `node` is an element whose subtree holds no visible text.
   * @param {Node} node
   */
  const isSkipped = (node) =>
    node.nodeType === ELEMENT_NODE && SKIPPED.has(/** @type {Element} */ (node).localName.toLowerCase());

  /** @type {Node | null} */
  const start = root.nodeType === DOCUMENT_NODE ? /** @type {Document} */ (root).documentElement : root;
  if (!start || isSkipped(start)) return '';
  /** @type {string[]} */
  const parts = [];
  // Iterative pre-order walk (no recursion: deep pages must not overflow the stack).
  /** @type {Node | null} */
  let node = start;
  while (node) {
    if (node.nodeType === TEXT_NODE || node.nodeType === CDATA_SECTION_NODE) {
      const words = (node.nodeValue || '').split(/\s+/).filter(Boolean);
      if (words.length) parts.push(words.join(' '));
    }
    /** @type {Node | null} */
    let next = isSkipped(node) ? null : node.firstChild;
    while (!next && node && node !== start) {
      next = node.nextSibling;
      if (!next) node = node.parentNode;
    }
    node = next;
  }
  return parts.join(' ');
}
