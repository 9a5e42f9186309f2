// @ts-check
/**
 * Finding the host processes a test's browser started: Chrome runs the host as
 * `<binary> chrome-extension://<id>/`, Firefox as `<binary> <host manifest path> <add-on id>`,
 * with the browser's environment, so they are the processes whose command line names the
 * extension origin or the host manifest and whose FORAGER_HOME is the test's.
 *
 * @module procs
 */

import { readdirSync, readFileSync } from 'node:fs';

/**
 * @param {string} foragerHome the FORAGER_HOME given to the browser
 * @returns {number[]} pids
 */
export function hostPids(foragerHome) {
  /** @type {number[]} */
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const byBrowser = cmdline.some((a) => a.startsWith('chrome-extension://') || a.endsWith('/org.forager.host.json'));
      if (!byBrowser || !/forager/.test(cmdline[0])) continue;
      const env = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (env.includes(`FORAGER_HOME=${foragerHome}`)) pids.push(Number(entry));
    } catch {
      // The process exited meanwhile, or is not ours to read.
    }
  }
  return pids;
}
