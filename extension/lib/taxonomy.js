// @ts-check
/**
 * Taxonomy edits. With the host connected an edit goes to the host (which owns the model used
 * for crawling) and the browser's copy is then refreshed from it. Without the host the edit is
 * applied to the browser's copy and logged, by topic path, in `chrome.storage.local`; the next
 * time the host connects the log is replayed to it before the copy is refreshed, so offline
 * edits are not lost.
 *
 * @module taxonomy
 */

import { errorText, HostRefusal } from './protocol.js';

/**
 * A taxonomy edit, with the host protocol's own fields (ids are those of the current topics).
 * @typedef {{type: 'add_topic', parent: number, name: string}
 *   | {type: 'rename_topic', topic: number, name: string}
 *   | {type: 'move_topic', topic: number, parent: number}
 *   | {type: 'delete_topic', topic: number}
 *   | {type: 'set_good', topic: number, good: boolean}
 *   | {type: 'add_example', topic: number, url: string, text: string}
 *   | {type: 'mark_not_relevant', url: string, text: string}} TopicEdit
 * @typedef {{topics: TopicInfo[], id?: number, removed_examples?: number, moved_from?: string,
 *   offline: boolean}} EditResult `moved_from`: the page was an example of that topic until now
 * @typedef {TopicEdit & {paths: Record<string, string>}} LoggedEdit an edit plus the paths of the topics it names
 * @typedef {import('./protocol.js').TopicInfo} TopicInfo
 * @typedef {import('./protocol.js').HostPort} HostPort
 * @typedef {import('./model.js').ModelStore} ModelStore
 */

const LOG_KEY = 'offlineEdits';
/** Fields of an edit that name topics. */
const TOPIC_FIELDS = /** @type {const} */ (['topic', 'parent']);

/**
 * Applies an edit through the host when it is connected, else locally. With `batch`, the
 * browser's copy is neither refreshed nor saved: the caller calls `finishBatch` at the end,
 * and passes `seen`, the topics as the batch's last host reply gave them.
 * @param {TopicEdit} edit
 * @param {{port: HostPort, models: ModelStore}} ctx
 * @param {{batch?: boolean, seen?: TopicInfo[]}} [options]
 * @returns {Promise<EditResult>}
 */
export async function applyEdit(edit, { port, models }, { batch = false, seen } = {}) {
  if (port.connected) {
    const { type, ...fields } = edit;
    // The paths the user saw: the host refuses the edit if its topics of these ids differ.
    const expect = topicPaths(edit, seen ?? await models.topics());
    let r;
    try {
      r = /** @type {any} */ (await port.request(type, /** @type {any} */ ({ ...fields, expect })));
    } catch (e) {
      // Refused as made against an old copy of the taxonomy: the browser takes the host's, so
      // the user sees what changed before trying again.
      if (e instanceof HostRefusal && e.code === 'stale') await models.refreshFromHost(port);
      throw e;
    }
    if (batch) return { ...pick(r), topics: r.topics, offline: false };
    if (edit.type === 'set_good' && keptInStep(edit, await models.get())) {
      // A flag: the same edit on the browser's copy keeps it in step without downloading the
      // whole model again (2 s for a FOLDOC-sized model, #29). Cached in the background.
      models.save().catch((e) => console.warn('forager: caching the model:', e));
      return { ...pick(r), topics: r.topics, offline: false };
    }
    await models.refreshFromHost(port);
    return { ...pick(r), topics: await models.topics(), offline: false };
  }
  const model = await models.get();
  const paths = topicPaths(edit, model.topics());
  const r = applyLocal(edit, model);
  if (!batch) await models.save();
  const log = await readLog();
  log.push({ ...edit, paths });
  await chrome.storage.local.set({ [LOG_KEY]: log });
  return { ...r, topics: model.topics(), offline: true };
}

/**
 * Applies a `set_good` the host made to the browser's copy too; false when the copy could not
 * take it (another copy of the taxonomy: then it is downloaded).
 * @param {TopicEdit} edit
 * @param {import('../pkg/forager_classifier.js').ForagerModel} model
 */
function keptInStep(edit, model) {
  try {
    applyLocal(edit, model);
    return true;
  } catch {
    return false;
  }
}

/**
 * Brings the browser's copy up to date after a batch of edits.
 * @param {{port: HostPort, models: ModelStore}} ctx
 */
export async function finishBatch({ port, models }) {
  if (port.connected) await models.refreshFromHost(port);
  else await models.save();
}

/**
 * Bookmark folders (or any named groups of pages) become topics under `parent` (the root by
 * default), keeping their tree: a folder's `path` (its own name last) is made of topics, a
 * child of the same name reused at each level; the pages become examples of the last.
 * @param {{name: string, path?: string[], pages: {url: string, text: string}[]}[]} folders
 * @param {{port: HostPort, models: ModelStore}} ctx
 * @param {number} [parent]
 * @returns {Promise<{topics: number, examples: number, errors: string[]}>}
 */
export async function importFolders(folders, ctx, parent = 0) {
  let topics = await ctx.models.topics();
  /** @type {string[]} */
  const errors = [];
  let nTopics = 0;
  let nExamples = 0;
  try {
    for (const folder of folders) {
      let topic = parent;
      for (const part of folder.path?.length ? folder.path : [folder.name]) {
        const name = part.replace(/[\/\\\s]+/g, ' ').trim() || 'Bookmarks';
        const above = topic;
        const had = topics.find((t) => t.parent === above && t.id !== above && t.name === name)?.id;
        if (had !== undefined) {
          topic = had;
          continue;
        }
        const r = await applyEdit({ type: 'add_topic', parent: above, name }, ctx, { batch: true, seen: topics });
        topic = /** @type {number} */ (r.id);
        topics = r.topics;
        nTopics++;
      }
      const r = await addExamples(topic, folder.pages, ctx, topics);
      topics = r.topics;
      nExamples += r.added;
      errors.push(...r.errors);
    }
  } finally {
    await finishBatch(ctx);
  }
  return { topics: nTopics, examples: nExamples, errors };
}

/**
 * Pages become examples of `topic`, as part of a batch (the caller calls `finishBatch`); a
 * refused page is reported, not fatal. `seen` is the topics as the batch last saw them.
 * @param {number} topic
 * @param {{url: string, text: string}[]} pages
 * @param {{port: HostPort, models: ModelStore}} ctx
 * @param {TopicInfo[]} seen
 * @returns {Promise<{added: number, errors: string[], topics: TopicInfo[],
 *   results: {url: string, fate: string}[]}>}
 */
export async function addExamples(topic, pages, ctx, seen) {
  let topics = seen;
  let added = 0;
  /** @type {string[]} */
  const errors = [];
  /** @type {{url: string, fate: string}[]} each page's fate, in order */
  const results = [];
  for (const page of pages) {
    try {
      const r = await applyEdit({ type: 'add_example', topic, url: page.url, text: page.text }, ctx,
        { batch: true, seen: topics });
      topics = r.topics;
      added++;
      results.push({ url: page.url, fate: r.moved_from ? `added (moved from ${r.moved_from})` : 'added' });
    } catch (e) {
      errors.push(`${page.url}: ${errorText(e)}`);
      results.push({ url: page.url, fate: `not added: ${errorText(e)}` });
    }
  }
  return { added, errors, topics, results };
}

/**
 * The same edit on the WebAssembly model (throws the model's error, e.g. an unknown topic).
 * @param {TopicEdit} edit
 * @param {import('../pkg/forager_classifier.js').ForagerModel} model
 * @returns {{id?: number, removed_examples?: number}}
 */
function applyLocal(edit, model) {
  switch (edit.type) {
    case 'add_topic': return { id: model.addTopic(edit.parent, edit.name, edit.name) };
    case 'rename_topic': model.renameTopic(edit.topic, edit.name, edit.name); return {};
    case 'move_topic': model.moveTopic(edit.topic, edit.parent); return {};
    case 'delete_topic': return { removed_examples: model.deleteTopic(edit.topic) };
    case 'set_good': model.setGood(edit.topic, edit.good); return {};
    case 'add_example': model.addExample(edit.topic, edit.url, edit.text); return {};
    case 'mark_not_relevant': model.markNotRelevant(edit.url, edit.text); return {};
    default: throw new Error(`unknown edit ${/** @type {any} */ (edit).type}`);
  }
}

/**
 * Replays the offline edits to the host (topics looked up by path in the host's current
 * taxonomy), then clears the log. Returns the edits that failed, as messages.
 * @param {HostPort} port
 * @returns {Promise<string[]>}
 */
export async function replayOfflineEdits(port) {
  const log = await readLog();
  if (!log.length) return [];
  /** @type {string[]} */
  const failures = [];
  let topics = (await port.request('topics')).topics;
  for (const entry of log) {
    const { paths, type, ...fields } = /** @type {LoggedEdit} */ (entry);
    try {
      for (const f of TOPIC_FIELDS) {
        if (!(f in paths)) continue;
        const t = topics.find((x) => x.path === paths[f]);
        if (!t) throw new Error(`no topic ${paths[f]} on the host`);
        /** @type {any} */ (fields)[f] = t.id;
      }
      const r = /** @type {any} */ (await port.request(type, /** @type {any} */ (fields)));
      if (Array.isArray(r.topics)) topics = r.topics;
    } catch (e) {
      failures.push(`${type} ${Object.values(paths).join(' ')}: ${errorText(e)}`);
    }
  }
  await chrome.storage.local.remove(LOG_KEY);
  return failures;
}

/** @returns {Promise<number>} how many edits wait for the host */
export async function offlineEditCount() {
  return (await readLog()).length;
}

/** @returns {Promise<LoggedEdit[]>} */
async function readLog() {
  const stored = await chrome.storage.local.get(LOG_KEY);
  return Array.isArray(stored[LOG_KEY]) ? stored[LOG_KEY] : [];
}

/**
 * @param {TopicEdit} edit
 * @param {TopicInfo[]} topics
 * @returns {Record<string, string>}
 */
function topicPaths(edit, topics) {
  /** @type {Record<string, string>} */
  const paths = {};
  for (const f of TOPIC_FIELDS) {
    if (!(f in edit)) continue;
    const id = /** @type {any} */ (edit)[f];
    const t = topics.find((x) => x.id === id);
    if (!t) throw new Error(`no topic with id ${id}`);
    paths[f] = t.path;
  }
  return paths;
}

/**
 * @param {any} r a host result
 * @returns {{id?: number, removed_examples?: number, moved_from?: string}}
 */
function pick(r) {
  /** @type {{id?: number, removed_examples?: number, moved_from?: string}} */
  const out = {};
  if (typeof r?.moved_from === 'string') out.moved_from = r.moved_from;
  if (typeof r?.id === 'number') out.id = r.id;
  if (typeof r?.removed_examples === 'number') out.removed_examples = r.removed_examples;
  return out;
}
