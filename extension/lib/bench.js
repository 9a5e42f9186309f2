// @ts-check
/**
 * Classification latency inside the extension (the browser test prints it).
 *
 * @module bench
 */

/**
 * Classifies `text` `warmup + runs` times and reports the median, min and max time per call.
 * @param {{classify(text: string): any}} model
 * @param {string} text
 * @param {{warmup?: number, runs?: number}} [options]
 */
export function benchClassify(model, text, { warmup = 5, runs = 30 } = {}) {
  for (let i = 0; i < warmup; i++) model.classify(text);
  /** @type {number[]} */
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    model.classify(text);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const median = times.length % 2 ? times[times.length >> 1] : (times[times.length / 2 - 1] + times[times.length / 2]) / 2;
  const bytes = new TextEncoder().encode(text).length;
  return { bytes, runs, medianMs: median, minMs: times[0], maxMs: times[times.length - 1],
    mbPerSec: bytes / 1e6 / (median / 1000) };
}

/**
 * Times `model.scoreLinks` on a made-up page of `links` links, each in a paragraph of words
 * (the extension's highlighting cost on a long page): median and worst of `runs` runs, in ms.
 * @param {import('../pkg/forager_classifier.js').ForagerModel} model
 * @param {number} links
 * @param {{warmup?: number, runs?: number}} [options]
 */
export function benchLinks(model, links, { warmup = 3, runs = 15 } = {}) {
  const words = ['network', 'protocol', 'router', 'packet', 'language', 'compiler', 'memory', 'kernel',
    'see', 'also', 'index', 'home', 'page', 'standard', 'address', 'cache'];
  /** @type {string[]} */
  const leaves = [];
  /** @type {{start: number, end: number, anchor: string}[]} */
  const spans = [];
  for (let i = 0; i < links; i++) {
    leaves.push(`${words[i % 16]} ${words[(i * 7) % 16]} text about item ${i}`);
    const anchor = `${words[(i * 3) % 16]} ${words[(i * 5) % 16]}`;
    spans.push({ start: leaves.length, end: leaves.length + 1, anchor });
    leaves.push(anchor);
  }
  const text = leaves.join(' ');
  /** @type {{score: number}[]} */
  let scores = [];
  const once = () => {
    const t0 = performance.now();
    scores = model.scoreLinks(text, leaves, spans);
    return performance.now() - t0;
  };
  for (let i = 0; i < warmup; i++) once();
  const times = Array.from({ length: runs }, once).sort((a, b) => a - b);
  return { links, leaves: leaves.length, medianMs: times[Math.floor(runs / 2)], maxMs: times[runs - 1],
    scored: scores.filter((s) => s.score >= 0 && s.score <= 1).length };
}
