// @ts-check
/**
 * The taxonomy as a collapsible tree: one `<li data-topic-id data-path>` per topic with a
 * toggle, a "good" checkbox, the name and the example counts (`.count[data-examples]`).
 *
 * @module tree
 */

import { el } from './ui.js';

/**
 * @typedef {import('./protocol.js').TopicInfo} TopicInfo
 * @typedef {{onSelect(t: TopicInfo): void, onGood(t: TopicInfo, good: boolean): void}} TreeHandlers
 */

const COLLAPSED_KEY = 'forager.collapsed';
/** The path of the topic last selected, selected again when the popup opens. */
const SELECTED_KEY = 'forager.selected';

export class TopicTree {
  /**
   * @param {HTMLElement} root the `<ul>` to fill
   * @param {TreeHandlers} handlers
   */
  constructor(root, handlers) {
    this.root = root;
    this.handlers = handlers;
    /** @type {Set<string>} collapsed paths, remembered across popup openings */
    this.collapsed = new Set(JSON.parse(localStorage.getItem(COLLAPSED_KEY) ?? '[]'));
    /** @type {number} */
    this.selected = 0;
    /** @type {string | null} path to select once the topics arrive */
    this.wanted = localStorage.getItem(SELECTED_KEY);
    /** @type {TopicInfo[]} */
    this.topics = [];
    /** Lower-case text a topic's path must contain (or a descendant's) to be shown. */
    this.filter = '';
    /** @type {Set<number> | null} topics matching the filter, with their ancestors */
    this.visible = null;
  }

  /**
   * Selects a topic (and remembers it for the next opening).
   * @param {TopicInfo} t
   */
  select(t) {
    this.selected = t.id;
    this.wanted = null;
    localStorage.setItem(SELECTED_KEY, t.path);
  }

  /** @param {string} text shows only topics whose path contains it, with their ancestors */
  setFilter(text) {
    this.filter = text.trim().toLowerCase();
    this.render(this.topics);
  }

  /** @param {TopicInfo[]} topics */
  render(topics) {
    this.topics = topics;
    const wanted = this.wanted !== null ? topics.find((t) => t.path === this.wanted) : undefined;
    if (wanted) this.select(wanted);
    if (!topics.some((t) => t.id === this.selected)) this.selected = 0;
    this.visible = null;
    if (this.filter) {
      const byId = new Map(topics.map((t) => [t.id, t]));
      this.visible = new Set();
      for (const t of topics) {
        if (!t.path.toLowerCase().includes(this.filter)) continue;
        for (let /** @type {TopicInfo | undefined} */ a = t; a && !this.visible.has(a.id); a = byId.get(a.parent)) {
          this.visible.add(a.id);
          if (a.id === a.parent) break;
        }
      }
    }
    /** @type {Map<number, TopicInfo[]>} */
    const children = new Map();
    for (const t of topics) {
      if (t.id === t.parent) continue;
      const list = children.get(t.parent) ?? [];
      list.push(t);
      children.set(t.parent, list);
    }
    for (const list of children.values()) list.sort((a, b) => a.name.localeCompare(b.name));
    const rootTopic = topics.find((t) => t.id === t.parent);
    this.root.replaceChildren();
    if (rootTopic) this.root.append(this.item(rootTopic, children, true));
  }

  /**
   * @param {TopicInfo} t
   * @param {Map<number, TopicInfo[]>} children
   * @param {boolean} isRoot
   * @returns {HTMLLIElement}
   */
  item(t, children, isRoot) {
    const kids = (children.get(t.id) ?? []).filter((k) => !this.visible || this.visible.has(k.id));
    // While filtering, every match shows, collapsed or not.
    const collapsed = !this.visible && this.collapsed.has(t.path);
    const toggle = el('button', { class: 'toggle', title: collapsed ? 'expand' : 'collapse',
      disabled: kids.length === 0, 'aria-expanded': String(!collapsed) }, kids.length ? (collapsed ? '▸' : '▾') : '·');
    toggle.addEventListener('click', () => {
      if (this.collapsed.has(t.path)) this.collapsed.delete(t.path); else this.collapsed.add(t.path);
      localStorage.setItem(COLLAPSED_KEY, JSON.stringify([...this.collapsed]));
      this.render(this.topics);
    });
    const good = el('input', { type: 'checkbox', class: 'good', checked: t.good, disabled: isRoot,
      title: 'good: the crawler looks for pages of this topic', 'aria-label': `${t.path} is good` });
    good.addEventListener('change', () => this.handlers.onGood(t, good.checked));
    const selected = t.id === this.selected;
    // The name is the control that selects the topic (a real button: focus, Enter and Space).
    const name = el('button', { type: 'button', class: 'name', title: t.path,
      'aria-current': selected ? 'true' : undefined }, isRoot ? 'All topics' : t.name);
    const learned = t.self_trained ?? 0;
    const count = el('span', { class: 'count', 'data-examples': t.examples, 'data-subtree': t.subtree_examples,
      'data-learned': learned,
      title: `${t.examples} examples here` + (learned ? ` (${learned} learned from the crawl)` : '') +
        `, ${t.subtree_examples} in the subtree` },
    kids.length ? `${t.examples} / ${t.subtree_examples}` : `${t.examples}`);
    const row = el('div', { class: 'row' }, toggle, good, name, count);
    row.addEventListener('click', (e) => {
      if (e.target === toggle || e.target === good) return;
      const byKeyboard = e.target === name && e.detail === 0;
      this.select(t);
      this.handlers.onSelect(t);
      this.render(this.topics);
      // Keyboard users keep their place: the re-rendered name takes the focus back.
      if (byKeyboard) /** @type {HTMLElement | null} */ (this.root.querySelector(`li[data-topic-id="${t.id}"] > .row .name`))?.focus();
    });
    const li = el('li', { class: `topic${selected ? ' selected' : ''}${t.good ? ' is-good' : ''}`,
      'data-topic-id': t.id, 'data-path': t.path }, row);
    if (kids.length && !collapsed) li.append(el('ul', {}, ...kids.map((k) => this.item(k, children, false))));
    return li;
  }

  /** @returns {TopicInfo | undefined} */
  selectedTopic() {
    return this.topics.find((t) => t.id === this.selected);
  }
}
