// @ts-check
/**
 * Bookmark folders as training material, read by the service worker (so closing the popup does
 * not stop an import): every folder that directly holds bookmarks becomes a group named after
 * it; each http(s) bookmark becomes a page whose text is the fetched page's visible text (same
 * rule as everywhere else, extracted by `htmlText`) when Forager may read pages (`<all_urls>`
 * granted) and the fetch succeeds within a few seconds, else the bookmark's title. Nested
 * folders keep their place in the tree (`path`: the folder names from the first of the user's
 * own folders down). The browser's own folders (the bookmarks bar or toolbar, the menu, "Other
 * bookmarks", "Mobile bookmarks") are not topics, and Firefox's default "Mozilla Firefox" folder
 * of bundled bookmarks is skipped with what it holds.
 *
 * @module bookmarks
 */

/**
 * @typedef {{name: string, path: string[], pages: {url: string, text: string, fetched: boolean}[]}} BookmarkFolder
 */

/** Folders browsers make and fill themselves: never the user's topics. */
export const DEFAULT_FOLDERS = new Set(['mozilla firefox', 'bookmarks bar', 'bookmarks toolbar', 'bookmarks menu',
  'other bookmarks', 'mobile bookmarks']);

/**
 * Whether `node` is one of the browser's own folders: a top-level folder of the tree (the bar,
 * the menu, other, mobile), or one of the default folders it ships with bookmarks in.
 * @param {{title?: string, url?: string}} node
 * @param {number} depth 0 for the tree's root
 */
export function browserFolder(node, depth) {
  return depth <= 1 || (!node.url && DEFAULT_FOLDERS.has((node.title ?? '').trim().toLowerCase()));
}

/**
 * @param {(html: string) => Promise<string>} htmlText the visible text of an HTML document
 * @param {{limit?: number, timeoutMs?: number, concurrency?: number,
 *   onProgress?: (done: number, total: number) => void}} [options]
 * @returns {Promise<BookmarkFolder[]>}
 */
export async function collectBookmarkFolders(htmlText, { limit = 500, timeoutMs = 5000, concurrency = 4, onProgress } = {}) {
  const tree = await chrome.bookmarks.getTree();
  /** @type {{name: string, path: string[], marks: {url: string, title: string}[]}[]} */
  const raw = [];
  /**
   * @param {chrome.bookmarks.BookmarkTreeNode} node
   * @param {number} depth
   * @param {string[]} path the user's folders above this one
   */
  const walk = (node, depth, path) => {
    // "Mozilla Firefox" and the like: the browser's bookmarks, not the user's.
    if (depth > 1 && browserFolder(node, depth)) return;
    const own = depth > 1 && Boolean(node.title);
    const here = own ? [...path, node.title] : path;
    const children = node.children ?? [];
    const marks = children
      .filter((c) => c.url && /^https?:/i.test(c.url))
      .map((c) => ({ url: /** @type {string} */ (c.url), title: c.title || /** @type {string} */ (c.url) }));
    if (marks.length && own) raw.push({ name: node.title, path: here, marks });
    for (const c of children) if (!c.url) walk(c, depth + 1, here);
  };
  for (const root of tree) walk(root, 0, []);

  const canFetch = await chrome.permissions.contains({ origins: ['<all_urls>'] });
  const jobs = raw.flatMap((f, fi) => f.marks.map((m) => ({ fi, m }))).slice(0, limit);
  /** @type {BookmarkFolder[]} */
  const folders = raw.map((f) => ({ name: f.name, path: f.path, pages: [] }));
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const { fi, m } = jobs[next++];
      const text = canFetch ? await fetchText(m.url, timeoutMs, htmlText) : '';
      folders[fi].pages.push({ url: m.url, text: text || m.title, fetched: Boolean(text) });
      onProgress?.(++done, jobs.length);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return folders.filter((f) => f.pages.length);
}

/**
 * The visible text of the page at `url`, or '' when it cannot be fetched as HTML in time.
 * @param {string} url
 * @param {number} timeoutMs
 * @param {(html: string) => Promise<string>} htmlText
 * @returns {Promise<string>}
 */
async function fetchText(url, timeoutMs, htmlText) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), credentials: 'omit' });
    if (!res.ok || !/html/i.test(res.headers.get('content-type') ?? '')) return '';
    return await htmlText(await res.text());
  } catch {
    return '';
  }
}
