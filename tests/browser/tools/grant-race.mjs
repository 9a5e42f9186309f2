// @ts-check
// The toolbar-grant race, made visible: navigates one tab to a new site N times, "clicks" the
// extension's toolbar button each time (which grants activeTab) and reads the page from the
// extension's worker with chrome.scripting.executeScript, and counts the refused reads.
//
//   node tools/grant-race.mjs at-once 400   the old tests' way: read as soon as the click returns
//   node tools/grant-race.mjs helper 400    through clickToolbarAndWaitForGrant
//
// On a quiet machine both modes read every page. Under CPU load (three copies at once on two
// busy cores, load 12-26) `at-once` had 14 of 1,200 reads refused ("Cannot access contents of
// the page") and `helper` 0 of 1,200. A diagnostic only: not part of `npm test`.
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { clickToolbarAndWaitForGrant, clickToolbarButton, extensionId, extensionWorker, inWorker, launch }
  from '../helpers/chromium.js';
import { CHROMIUM, EXTENSION } from '../helpers/paths.js';

const mode = process.argv[2] ?? 'at-once';
const rounds = Number(process.argv[3] ?? 100);
if (!['at-once', 'helper'].includes(mode) || !(rounds > 0)) {
  console.error('usage: node tools/grant-race.mjs at-once|helper [rounds]');
  process.exit(2);
}
// Every page of every site: the proxy answers each request with a small page.
const proxy = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end(`<p>page ${req.url}</p>`);
});
await new Promise((r) => proxy.listen(0, '127.0.0.1', () => r(null)));
const tmp = await mkdtemp(path.join(os.tmpdir(), 'forager-grant-race-'));
const ctx = await launch({ chromium: CHROMIUM, extension: EXTENSION, profile: tmp, home: tmp,
  proxy: `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (proxy.address()).port}` });
try {
  const extId = await extensionId(EXTENSION);
  const worker = await extensionWorker(ctx, extId);
  const tab = await ctx.newPage();
  await tab.goto('http://first.test/', { waitUntil: 'load' });
  const tabId = await clickToolbarAndWaitForGrant(ctx, worker, tab, extId);
  let refused = 0;
  for (let i = 0; i < rounds; i++) {
    // A new site: the navigation takes the last grant away.
    const url = `http://site${i}.test/page.html`;
    await tab.goto(url, { waitUntil: 'load' });
    if (mode === 'helper') await clickToolbarAndWaitForGrant(ctx, worker, tab, extId);
    else await clickToolbarButton(ctx, tab, extId);
    const read = await inWorker(worker, async (id) => {
      try {
        const [r] = await chrome.scripting.executeScript({ target: { tabId: id }, func: () => location.href });
        return r?.result;
      } catch (e) { return `refused: ${/** @type {any} */ (e)?.message}`; }
    }, tabId);
    if (read !== url) { refused++; console.log(`round ${i}: ${read}`); }
  }
  console.log(`${mode}: ${refused} of ${rounds} reads refused right after the click`);
} finally {
  await ctx.close();
  proxy.close();
  await rm(tmp, { recursive: true, force: true });
}
