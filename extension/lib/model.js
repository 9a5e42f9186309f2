// @ts-check
/**
 * The browser's copy of the Forager model: the WebAssembly classifier loaded lazily, its bytes
 * cached in `chrome.storage.local` (base64), falling back to the packaged starter model
 * (`pkg/starter.fgm`), refreshed from the host with chunked `get_model` when the host is there.
 *
 * @module model
 */

import init, { ForagerModel } from '../pkg/forager_classifier.js';
import { base64ToBytes, bytesToBase64 } from './base64.js';

/**
 * Where the current model came from.
 * @typedef {'host' | 'cache' | 'starter' | 'empty'} ModelSource
 * @typedef {import('./protocol.js').TopicInfo} TopicInfo
 * @typedef {import('./protocol.js').HostPort} HostPort
 */

const STORAGE_KEY = 'model';
const SOURCE_KEY = 'modelSource';

/** @type {Promise<unknown> | null} */
let wasmReady = null;

/**
 * Initialises the WebAssembly module once (module service workers allow no top-level await, so
 * every user calls this inside its handler).
 * @returns {Promise<unknown>}
 */
export function ensureWasm() {
  wasmReady ??= init({ module_or_path: chrome.runtime.getURL('pkg/forager_classifier_bg.wasm') });
  return wasmReady;
}

export class ModelStore {
  constructor() {
    /** @type {ForagerModel | null} */
    this.model = null;
    /** @type {ModelSource} */
    this.source = 'empty';
    /** @type {Promise<ForagerModel> | null} */
    this.loading = null;
    /** Bytes of the model as last saved (its size is shown in the UI). */
    this.bytes = 0;
    /** Counts replacements: a load that started before one must not overwrite its model. */
    this.generation = 0;
    /** Test hook: milliseconds a load waits after reading the cache (a slow first load). */
    this.loadDelayMs = 0;
  }

  /**
   * The model, loading it on first use: cached bytes, else the starter model, else an empty one.
   * @returns {Promise<ForagerModel>}
   */
  get() {
    if (this.model) return Promise.resolve(this.model);
    this.loading ??= this.load().finally(() => { this.loading = null; });
    return this.loading;
  }

  /** @returns {Promise<ForagerModel>} */
  async load() {
    const generation = this.generation;
    await ensureWasm();
    const stored = await chrome.storage.local.get([STORAGE_KEY, SOURCE_KEY]);
    if (this.loadDelayMs) await new Promise((r) => setTimeout(r, this.loadDelayMs));
    // A refresh from the host landed while this load waited: its model wins.
    if (this.generation !== generation && this.model) return this.model;
    if (typeof stored[STORAGE_KEY] === 'string') {
      try {
        const bytes = base64ToBytes(stored[STORAGE_KEY]);
        this.set(ForagerModel.fromBytes(bytes), stored[SOURCE_KEY] === 'host' ? 'host' : 'cache', bytes.length);
        return /** @type {ForagerModel} */ (this.model);
      } catch (e) {
        console.warn('forager: the cached model is unreadable, using the starter model:', e);
      }
    }
    try {
      const res = await fetch(chrome.runtime.getURL('pkg/starter.fgm'));
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const bytes = new Uint8Array(await res.arrayBuffer());
      if (this.generation !== generation && this.model) return this.model;
      this.set(ForagerModel.fromBytes(bytes), 'starter', bytes.length);
    } catch (e) {
      console.warn('forager: no starter model (pkg/starter.fgm), starting empty:', e);
      this.set(new ForagerModel(), 'empty', 0);
    }
    return /** @type {ForagerModel} */ (this.model);
  }

  /**
   * @param {ForagerModel} model
   * @param {ModelSource} source
   * @param {number} bytes
   */
  set(model, source, bytes) {
    if (this.model && this.model !== model) this.model.free();
    this.model = model;
    this.source = source;
    this.bytes = bytes;
  }

  /**
   * Replaces the model with one read from `bytes` (validated by `fromBytes`) and caches it.
   * @param {Uint8Array} bytes
   * @param {ModelSource} source
   */
  async replace(bytes, source) {
    await ensureWasm();
    this.set(ForagerModel.fromBytes(bytes), source, bytes.length);
    this.generation++;
    await chrome.storage.local.set({ [STORAGE_KEY]: bytesToBase64(bytes), [SOURCE_KEY]: source });
  }

  /** Caches the current model's bytes after a local edit. */
  async save() {
    const model = await this.get();
    const bytes = model.toBytes();
    this.bytes = bytes.length;
    if (this.source !== 'host') this.source = 'cache';
    await chrome.storage.local.set({ [STORAGE_KEY]: bytesToBase64(bytes), [SOURCE_KEY]: this.source });
  }

  /**
   * Downloads the host's model in chunks (`get_model` until offset + length = total).
   * @param {HostPort} port
   */
  async refreshFromHost(port) {
    await this.replace(await port.download('get_model', {}), 'host');
  }

  /** @returns {Promise<TopicInfo[]>} */
  async topics() {
    return (await this.get()).topics();
  }
}
