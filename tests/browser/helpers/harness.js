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

/** The anchors of the menu bar of `menuPageBody`: words of the networking topic. */
const MENU_WORDS = ['Networking', 'Network protocols', 'TCP/IP', 'Ethernet', 'Routers', 'Internet',
  'Local area network', 'Wide area network', 'Packet switching', 'Modems', 'Bandwidth', 'Firewalls',
  'Network topology', 'IP address', 'Domain Name System', 'Email', 'File transfer', 'HTTP', 'Wireless networks',
  'Token Ring'];

/**
 * The body of a page whose top is a bar of 20 site links marked up as plain `div`s (no `nav`, no
 * menu class: the tag-and-class boilerplate rule does not see it) with the topic's words as
 * anchors, above an article whose running text holds 6 links with plain anchors: what a reader
 * follows next is in the article. Menu links go to `/menu-N.html`, the article's to
 * `/entry-N.html`.
 */
export function menuPageBody() {
  const bar = MENU_WORDS.map((w, i) => `<a href="/menu-${i + 1}.html">${w}</a>`).join(' | ');
  /** @param {number} i @param {string} text */
  const entry = (i, text) => `<a href="/entry-${i}.html">${text}</a>`;
  return `<div id="top"><div class="bar">${bar}</div></div>
<div id="page"><h1>Token bus</h1>
<p>A token bus is a network in which the stations take turns to send, passing a token along a
bus cable. ${entry(1, 'The first design')} came from factory automation, where ${entry(2, 'its users')}
wanted a bounded delay for every frame on the shared medium. Each station knows the address of the
next one, and the token visits them in a logical ring.</p>
<p>Frames are sent only by the station holding the token, so collisions cannot happen on the cable,
unlike ${entry(3, 'the older scheme')} that listens before sending. ${entry(4, 'A later standard')}
described the physical layer and the media access rules, and ${entry(5, 'several vendors')} built
interface cards for it. ${entry(6, 'Its successors')} moved the same ideas onto rings of fibre.</p></div>`;
}

/**
 * Presses the popup's Start when there is nothing to crawl, and checks the notice that tells
 * the user what to do comes within 1 s (timed in the page, from the click as the page sees it
 * to the notice shown). Works with a Playwright or a Puppeteer page.
 * @param {any} popup the popup page
 * @param {{diagnostic: (s: string) => void}} t the test context
 * @returns {Promise<string>} the notice's text
 */
export async function startSaysNothingToCrawl(popup, t) {
  await popup.evaluate(() => {
    const w = /** @type {any} */ (window);
    w.clickedAt = 0;
    w.shownAt = 0;
    document.getElementById('start-crawl')?.addEventListener('click', () => { w.clickedAt = performance.now(); },
      { capture: true });
    new MutationObserver(() => {
      if (!document.getElementById('notice')?.hidden && !w.shownAt) w.shownAt = performance.now();
    }).observe(/** @type {HTMLElement} */ (document.getElementById('notice')), { attributes: true });
  });
  await popup.click('#start-crawl');
  await popup.waitForSelector('#notice:not([hidden])', { timeout: 5000 });
  const took = await popup.evaluate(() => /** @type {any} */ (window).shownAt - /** @type {any} */ (window).clickedAt);
  const said = await popup.evaluate(() => document.getElementById('notice-text')?.textContent ?? '');
  t.diagnostic(`Start answered in ${took.toFixed(0)} ms: ${said}`);
  assert.ok(took <= 1000, `told within 1 s (took ${took} ms)`);
  assert.match(said, /^Nothing to crawl yet: open a page about your topic and press "Add current page as example"/);
  return said;
}
