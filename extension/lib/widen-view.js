// @ts-check
/**
 * The side panel's "Widen your topic?" (focused-crawling-1999 §2.1): when the crawl's census
 * shows that the good pages keep leading into a sibling or the parent of a good topic, it says
 * so with the evidence (counts and example pages) and marks that topic good in one click.
 *
 * @module widen-view
 */

import { send } from './messages.js';
import { $, act, el, shortUrl, showNotice, tabLink } from './ui.js';

/**
 * @typedef {import('./protocol.js').Suggestion} Suggestion
 * @typedef {import('./protocol.js').Looked} Looked
 */

/** A suggestion needs this share of the pages (the host's `MIN_SHARE`). */
const MIN_SHARE = 1 / 3;

/**
 * Shows the suggestions; with none, what the census looked at once a crawl gave it something
 * (the section hides before that).
 * @param {Suggestion[]} list
 * @param {Looked | null} [looked]
 */
export function showSuggestions(list, looked = null) {
  const lookedAtSome = Boolean(looked && looked.of > 0);
  $('widen').hidden = list.length === 0 && !lookedAtSome;
  $('widen-note').textContent = list.length || !looked || !lookedAtSome ? ''
    : `Looked at the ${looked.of} pages your good pages lead to outside your good topics: no topic next to ` +
      `a good one holds a third of them${looked.best ? ` (the most, ${looked.best[0]}, holds ` +
      `${Math.round(100 * looked.best[2])}%)` : ''}, so there is nothing to suggest yet.`;
  $('widen-note').dataset.share = String(looked?.best?.[2] ?? 0);
  $('widen-note').dataset.min = String(MIN_SHARE);
  $('suggestions').replaceChildren(...list.map((s) => {
    const pct = Math.round(100 * s.share);
    const why = el('p', { class: 'why' }, `${pct}% of the ${s.of} pages your good pages lead to outside your good topics are classified `,
      el('b', {}, s.path), ` (${s.pages} pages), ${s.relation === 'parent' ? 'the parent' : 'a sibling'} of ${s.next_to}.`);
    const examples = el('ul', { class: 'evidence small' },
      ...s.examples.map((e) => el('li', {}, tabLink(e.url, e.title || shortUrl(e.url)))));
    const mark = el('button', { class: 'mark-good small-button' }, `Mark ${s.path} good`);
    mark.addEventListener('click', () => act(mark, async () => {
      await send({ type: 'set_good', topic: s.topic, good: true });
      showNotice(null);
      await refreshSuggestions();
    }));
    return el('li', { 'data-path': s.path, 'data-share': s.share }, why, examples, mark);
  }));
}

/** Asks the host for the suggestions (none without it). */
export async function refreshSuggestions() {
  const r = await send({ type: 'suggestions' }).catch(() => ({ suggestions: [], looked: null }));
  showSuggestions(r.suggestions ?? [], r.looked ?? null);
}
