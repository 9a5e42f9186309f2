// @ts-check
/**
 * The links of the page being read, for "highlight promising links": the DOM leaves and each
 * link's leaf range, by the host parser's rule (native-host/core/src/parse.rs `walk`), and the
 * marks on the most promising links.
 *
 * Leaves are numbered left to right over the visible part of the document (outside `head`,
 * `script`, `style`, `noscript` and `template`): every non-blank text node (whitespace
 * collapsed) and every element without children (an `<img>`, a `<br>`, an empty anchor), which
 * is a leaf without text. A link is an `a` or `area` with an `href` that resolves to http(s); its
 * anchor is its own leaves.
 *
 * `pageLinks` is self-contained (the service worker injects it with
 * `chrome.scripting.executeScript({target, func: pageLinks, args})`): one function reads the
 * page, marks links and removes the marks, so the walk that numbers links is the same for all
 * three.
 *
 * Marks change nothing but two attributes of the marked links (`data-forager-mark`, and
 * `title`, whose own value is kept and put back) and one `<style>` element: an outline, which
 * takes no layout space, so nothing on the page moves; no listeners are added.
 *
 * @module page-links
 */

/**
 * A mark for the link numbered `i`.
 * @typedef {{i: number, href: string, rank: number, score: number, topic: string}} LinkMark
 * @typedef {{href: string, start: number, end: number, anchor: string, boilerplate: boolean,
 *   menu: boolean}} PageLink
 *   `boilerplate`: the link sits in navigation boilerplate (visible-text.js's rule), which the
 *   scores weigh down as the crawler's soft focus does; `menu`: it is boilerplate, or it sits in
 *   a block made of links (a bar or list of many links and little other text: a menu whatever
 *   its markup), which "best next links" lists after the links of the page's content
 * @typedef {{url: string, title: string, leaves: string[], links: PageLink[], marked: number}} PageLinks
 */

/**
 * Reads the page's leaves and links (`read`), marks links (`mark`, with `marks`) or removes
 * every mark (`clear`); always returns the page's leaves and links, and how many marks are
 * on the page afterwards.
 * @param {'read' | 'mark' | 'clear'} action
 * @param {LinkMark[]} [marks]
 * @returns {PageLinks}
 */
export function pageLinks(action, marks = []) {
  // Everything lives in here: the function is serialised by executeScript.
  const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'head']);
  const MARK = 'data-forager-mark';
  const SAVED_TITLE = 'data-forager-title';
  const STYLE_ID = 'forager-link-marks';
  const ELEMENT_NODE = 1;
  const TEXT_NODE = 3;
  const CDATA_SECTION_NODE = 4;
  /** @type {string[]} */
  const leaves = [];
  /** @type {{el: Element, href: string, start: number, end: number}[]} */
  const links = [];
  /**
   * The resolved http(s) href of a link element, or null.
   * @param {Element} el
   */
  const hrefOf = (el) => {
    const raw = el.getAttribute('href');
    if (raw === null) return null;
    try {
      const u = new URL(raw, document.baseURI);
      return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
    } catch {
      return null;
    }
  };
  // Navigation boilerplate, by visible-text.js's rule (the host's `is_boilerplate`): a nav,
  // footer or aside, a navigation landmark, or an id/class word such as nav, menu or footer,
  // unless it holds the page's main content.
  const BOILER_TAGS = new Set(['nav', 'footer', 'aside']);
  const BOILER_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary']);
  const BOILER_WORDS = new Set(['nav', 'navbar', 'navigation', 'menu', 'footer', 'sidebar', 'breadcrumb',
    'breadcrumbs']);
  /** @param {string | null} v @param {Set<string>} set */
  const hasWord = (v, set) => !!v && v.split(/[-_ \t\n\f\r]/).some((w) => set.has(w.toLowerCase()));
  /** @type {Map<Element, boolean>} whether an element is boilerplate, asked once per element */
  const boilerplate = new Map();
  /** @param {Element} at */
  const isBoilerplate = (at) => {
    let b = boilerplate.get(at);
    if (b === undefined) {
      b = (BOILER_TAGS.has(at.localName.toLowerCase()) || hasWord(at.getAttribute('role'), BOILER_ROLES) ||
        hasWord(at.getAttribute('id'), BOILER_WORDS) || hasWord(at.getAttribute('class'), BOILER_WORDS)) &&
        !at.querySelector('main, article, [role~="main" i]');
      boilerplate.set(at, b);
    }
    return b;
  };
  /** @param {Element} el */
  const inBoilerplate = (el) => {
    for (let at = el.parentElement; at; at = at.parentElement) if (isBoilerplate(at)) return true;
    return false;
  };
  // A menu whatever its markup: the nearest block around a link holds at least MENU_LINKS
  // links, and links make most of its text (link density, as boilerplate detectors measure it).
  const BLOCKS = new Set(['div', 'p', 'ul', 'ol', 'dl', 'menu', 'table', 'tbody', 'tr', 'td', 'th', 'section',
    'header', 'footer', 'nav', 'aside', 'main', 'article', 'body', 'form', 'blockquote', 'center', 'html']);
  const MENU_LINKS = 6;
  const MENU_DENSITY = 0.7;
  /** @param {string | null} t */
  const chars = (t) => (t || '').replace(/[\s|·•,;:\-–—/]+/g, '').length;
  /** @type {Map<Element, boolean>} whether a block is made of links, asked once per block */
  const linkBlocks = new Map();
  /** @param {Element} el */
  const inMenu = (el) => {
    let at = el.parentElement;
    while (at && !BLOCKS.has(at.localName.toLowerCase())) at = at.parentElement;
    if (!at) return false;
    let m = linkBlocks.get(at);
    if (m === undefined) {
      const anchors = [...at.querySelectorAll('a[href], area[href]')];
      const linked = anchors.reduce((n, a) => n + chars(a.textContent), 0);
      m = anchors.length >= MENU_LINKS && linked >= MENU_DENSITY * chars(at.textContent);
      linkBlocks.set(at, m);
    }
    return m;
  };
  const root = document.documentElement;
  // Iterative pre-order walk with an explicit exit step, as the host's.
  /** @type {(Node | {exit: number})[]} */
  const stack = root ? [root] : [];
  while (stack.length) {
    const item = /** @type {Node | {exit: number}} */ (stack.pop());
    if ('exit' in item) {
      links[item.exit].end = leaves.length;
      continue;
    }
    const node = item;
    if (node.nodeType === TEXT_NODE || node.nodeType === CDATA_SECTION_NODE) {
      // Rust's White_Space plus U+FEFF, as visibleText.
      const words = (node.nodeValue || '').split(/[\s\u0085]+/).filter(Boolean);
      if (words.length) leaves.push(words.join(' '));
      continue;
    }
    if (node.nodeType !== ELEMENT_NODE) continue;
    const el = /** @type {Element} */ (node);
    const name = el.localName.toLowerCase();
    if (SKIPPED.has(name)) continue;
    if ((name === 'a' || name === 'area') && el.hasAttribute('href')) {
      links.push({ el, href: hrefOf(el) ?? '', start: leaves.length, end: leaves.length });
      stack.push({ exit: links.length - 1 });
    }
    if (!el.firstChild) {
      leaves.push('');
      continue;
    }
    /** @type {Node[]} */
    const children = [];
    /** @type {Node | null} */
    let c = el.firstChild;
    for (; c; c = c.nextSibling) children.push(c);
    for (let k = children.length - 1; k >= 0; k--) stack.push(children[k]);
  }
  const usable = links.filter((l) => l.href);

  const clear = () => {
    for (const el of document.querySelectorAll(`[${MARK}]`)) {
      el.removeAttribute(MARK);
      if (el.hasAttribute(SAVED_TITLE)) {
        el.setAttribute('title', el.getAttribute(SAVED_TITLE) ?? '');
        el.removeAttribute(SAVED_TITLE);
      } else {
        el.removeAttribute('title');
      }
    }
    document.getElementById(STYLE_ID)?.remove();
  };
  if (action === 'clear' || action === 'mark') clear();
  if (action === 'mark' && marks.length) {
    const style = document.createElement('style');
    style.id = STYLE_ID;
    // Outlines take no layout space: nothing on the page moves.
    style.textContent = `[${MARK}] { outline: 2px solid #d9480f !important; outline-offset: 1px !important; }` +
      `[${MARK}="1"], [${MARK}="2"] { outline: 3px solid #c92a2a !important; }`;
    (document.head ?? document.documentElement).append(style);
    for (const m of marks) {
      const l = usable[m.i];
      // The page changed since it was read: a link that is not the one scored is left alone.
      if (!l || l.href !== m.href) continue;
      if (l.el.hasAttribute('title')) l.el.setAttribute(SAVED_TITLE, l.el.getAttribute('title') ?? '');
      l.el.setAttribute(MARK, String(m.rank));
      l.el.setAttribute('title', `Forager #${m.rank}: ${Math.round(m.score * 100)}% likely to lead to ` +
        (m.topic ? `your topic ${m.topic}` : 'your good topics'));
    }
  }
  return {
    url: location.href,
    title: document.title,
    leaves,
    links: usable.map((l) => {
      const anchor = leaves.slice(l.start, l.end).filter(Boolean).join(' ');
      const boilerplate = inBoilerplate(l.el);
      return { href: l.href, start: l.start, end: l.end, anchor, boilerplate, menu: boilerplate || inMenu(l.el) };
    }),
    marked: document.querySelectorAll(`[${MARK}]`).length,
  };
}
