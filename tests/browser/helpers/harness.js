// @ts-check
/**
 * What the browser suites share beyond the mini-web: polling, the FOLDOC proxy (`forager
 * serve-web`) and the labelled page the classification scenarios use.
 *
 * @module harness
 */

import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import { labelledNonExamples } from './foldoc.js';

/**
 * Polls `fn` until it returns a truthy value; fails with `what` and the last value after `ms`.
 * @template T
 * @param {string} what
 * @param {() => Promise<T>} fn
 * @param {number} ms
 * @returns {Promise<T>}
 */
export async function waitFor(what, fn, ms) {
  const deadline = Date.now() + ms;
  /** @type {any} */
  let last;
  for (;;) {
    try { last = await fn(); } catch (e) { last = e; }
    if (last && !(last instanceof Error)) return last;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Starts `forager serve-web <web> --port 0` and reads its port.
 * @param {string} forager the binary
 * @param {string} web the mini-web directory
 * @returns {Promise<{child: import('node:child_process').ChildProcess, port: number}>}
 */
export async function startServeWeb(forager, web) {
  const child = spawn(forager, ['serve-web', web, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const port = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`serve-web printed no port: ${out}`)), 15_000);
    timer.unref();
    child.stdout.on('data', (d) => {
      out += d;
      const m = /^(\d+)\s*$/m.exec(out);
      if (m) { clearTimeout(timer); resolve(Number(m[1])); }
    });
    child.on('exit', (code) => reject(new Error(`serve-web exited (${code}): ${out}`)));
  });
  return { child, port };
}

/**
 * A page labelled `topic`, not an example, that the native CLI classifies into `topic`; with
 * the CLI's verdict as `native`.
 * @param {string} web
 * @param {string} topic
 * @param {(args: string[]) => Promise<{stdout: string}>} forager runs the CLI
 * @param {string} model the model file
 */
export async function pickPage(web, topic, forager, model) {
  const candidates = (await labelledNonExamples(web, topic)).slice(0, 40);
  const { stdout } = await forager(['classify', '--model', model, '--json', ...candidates.map((c) => c.file)]);
  const lines = stdout.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
  const i = lines.findIndex((l) => l.best_leaf === topic);
  assert.ok(i >= 0, `none of ${candidates.length} ${topic} pages classifies as ${topic} natively`);
  return { ...candidates[i], native: lines[i] };
}
