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
