// @ts-check
/**
 * Visible text of a page or of part of one, as the Forager extension feeds it to the classifier.
 *
 * Plain DOM walking with no dependencies, so it runs in a content script, in an extension page
 * (on a document from DOMParser) and in tests alike. It mirrors what the native host's HTML
 * extractor keeps for the classifier: the text nodes outside script, style, noscript, template
 * and head, joined with single spaces, leaving out navigation boilerplate (nav, footer, aside,
 * navigation/banner/contentinfo/complementary landmarks, and elements whose id or class has a
 * word such as nav, menu, footer or sidebar, unless they hold main/article content) unless
 * nothing else is left.
 *
 * `visibleText` is self-contained (no reference to anything outside its own body), so the
 * service worker can inject this very function into a tab with
 * `chrome.scripting.executeScript({target, func: visibleText})`: called there without an
 * argument it reads the tab's `document`. One rule, one copy.
 *
 * @module visible-text
 */

/**
 * Returns the main visible text of a document or element: its text nodes in document order,
 * outside `script`, `style`, `noscript`, `template` and `head` and outside navigation
 * boilerplate (all visible text when that leaves nothing), with every run of whitespace
 * collapsed to one space and none at either end. The same rule as the host's `parse::walk`.
 *
 * @param {Document | Element} [root] the page (`document`, the default) or an element of one
 * @returns {string} the text, possibly empty
 */
export function visibleText(root = document) {
  // Everything the walk needs lives in here: the function is also serialised by executeScript.
  /** Elements whose contents are never visible text. */
  const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'head']);
  /** Navigation and page furniture: tags, landmark roles, and id/class words. */
  const BOILER_TAGS = new Set(['nav', 'footer', 'aside']);
  const BOILER_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary']);
  const BOILER_WORDS = new Set(['nav', 'navbar', 'navigation', 'menu', 'footer', 'sidebar',
    'breadcrumb', 'breadcrumbs']);
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

  /**
   * Whether any word of `value` (split at '-', '_' and ASCII spaces) is in `set`, ignoring case.
   * @param {string | null} value
   * @param {Set<string>} set
   */
  const hasWord = (value, set) =>
    !!value && value.split(/[-_ \t\n\f\r]/).some((w) => set.has(w.toLowerCase()));
  /**
   * Whether `node` is an element of navigation boilerplate.
   * @param {Node} node
   */
  const isBoilerplate = (node) => {
    if (node.nodeType !== ELEMENT_NODE) return false;
    const el = /** @type {Element} */ (node);
    return BOILER_TAGS.has(el.localName.toLowerCase()) ||
      hasWord(el.getAttribute('role'), BOILER_ROLES) ||
      hasWord(el.getAttribute('id'), BOILER_WORDS) ||
      hasWord(el.getAttribute('class'), BOILER_WORDS);
  };

  /** @type {Node | null} */
  const start = root.nodeType === DOCUMENT_NODE ? /** @type {Document} */ (root).documentElement : root;
  if (!start || isSkipped(start)) return '';
  /**
   * Whether `node` is main content: `main`, `article` or `role=main`.
   * @param {Node} node
   */
  const isMainContent = (node) => {
    if (node.nodeType !== ELEMENT_NODE) return false;
    const el = /** @type {Element} */ (node);
    const name = el.localName.toLowerCase();
    return name === 'main' || name === 'article' ||
      (el.getAttribute('role') ?? '').split(/[ \t\n\f\r]+/).some((w) => w.toLowerCase() === 'main');
  };
  // The main-content elements under `start` (not inside skipped elements) and all their
  // ancestors: a wrapper holding the main content is never boilerplate. Linear: the climb
  // stops at a node already marked.
  /** @type {Set<Node>} */
  const holders = new Set();
  /** @type {Node[]} */
  const stack = [start];
  while (stack.length) {
    const n = /** @type {Node} */ (stack.pop());
    if (isSkipped(n)) continue;
    if (isMainContent(n)) {
      /** @type {Node | null} */
      let at = n;
      while (at && !holders.has(at)) { holders.add(at); at = at.parentNode; }
    }
    for (let c = n.firstChild; c; c = c.nextSibling) stack.push(c);
  }
  /** @type {string[]} */
  const main = [];
  /** @type {string[]} */
  const all = [];
  let boilerplateDepth = 0;
  // Iterative pre-order walk (no recursion: deep pages must not overflow the stack).
  /** @type {Node | null} */
  let node = start;
  while (node) {
    if (node.nodeType === TEXT_NODE || node.nodeType === CDATA_SECTION_NODE) {
      // Rust's White_Space plus U+FEFF on both sides: JavaScript's \s lacks U+0085.
      const words = (node.nodeValue || '').split(/[\s\u0085]+/).filter(Boolean);
      if (words.length) {
        all.push(words.join(' '));
        if (boilerplateDepth === 0) main.push(words.join(' '));
      }
    }
    /** @type {Node | null} */
    let next = isSkipped(node) ? null : node.firstChild;
    if (next && isBoilerplate(node) && !holders.has(node)) boilerplateDepth++;
    while (!next && node && node !== start) {
      next = node.nextSibling;
      if (!next) {
        node = node.parentNode;
        // Leaving an element whose children were all visited.
        if (node && node !== start && isBoilerplate(node) && !holders.has(node)) boilerplateDepth--;
      }
    }
    node = next;
  }
  return (main.length ? main : all).join(' ');
}
