// @ts-check
// The HTML crawl report (`forager report DB --html FILE`) rendered in headless Chromium.
//
// Crawls 400 pages of the FOLDOC mini-web (networking task) with the real host, writes the
// report, opens it from disk, checks that its charts render at a readable size with no page
// errors and nothing wider than the window, that the hub table links to crawled pages, and
// saves a full-page screenshot to out/report.png.
//
// Environment: FORAGER_BIN (default <repo>/target/release/forager), CHROMIUM_PATH (default
// /usr/bin/chromium).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { ensureFoldoc } from './helpers/foldoc.js';

const run = promisify(execFile);

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..', '..');
const TARGET = path.join(REPO, 'target');
const TARBALL = path.resolve(REPO, '..', 'shared', 'miniweb', 'foldoc.tar.gz');
const OUT = path.join(HERE, 'out');
const FORAGER = process.env.FORAGER_BIN || path.join(TARGET, 'release', 'forager');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const PAGES = 400;

/** @type {{tmp: string, html: string, browser: import('playwright-core').Browser | null}} */
const S = { tmp: '', html: '', browser: null };

before(async () => {
  const web = await ensureFoldoc(TARGET, TARBALL);
  S.tmp = await mkdtemp(path.join(os.tmpdir(), 'forager-report-'));
  const db = path.join(S.tmp, 'crawl.db');
  S.html = path.join(S.tmp, 'report.html');
  await run(FORAGER, ['crawl', '--web', web, '--task', 'networking', '--pages', String(PAGES),
    '--db', db, '--distill-every', '200'], { maxBuffer: 1 << 24 });
  await run(FORAGER, ['report', db, '--html', S.html], { maxBuffer: 1 << 24 });
  S.browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
});

after(async () => {
  await S.browser?.close();
  if (S.tmp) await rm(S.tmp, { recursive: true, force: true });
});

test('the HTML report renders readable charts and hub links in Chromium', async () => {
  assert.ok(S.browser);
  const page = await S.browser.newPage({ viewport: { width: 1280, height: 900 } });
  /** @type {string[]} */
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(pathToFileURL(S.html).href);
  const r = await page.evaluate(() => {
    const svgs = [...document.querySelectorAll('svg')].map((s) => {
      const b = s.getBoundingClientRect();
      return { w: b.width, h: b.height, marks: s.querySelectorAll('circle, rect, polyline, path').length };
    });
    const headings = [...document.querySelectorAll('h2')].map((h) => h.textContent);
    const hubLinks = [...document.querySelectorAll('h2 + table a')].map((a) => a.getAttribute('href'));
    return {
      svgs,
      headings,
      hubLinks,
      fetched: document.body.textContent?.match(/(\d+) pages fetched/)?.[1],
      overflow: document.documentElement.scrollWidth - window.innerWidth,
    };
  });
  await mkdir(OUT, { recursive: true });
  await page.screenshot({ path: path.join(OUT, 'report.png'), fullPage: true });
  await page.close();

  assert.deepEqual(errors, []);
  assert.equal(Number(r.fetched), PAGES);
  // Scatter with moving average, harvest curve, relevance histogram.
  assert.ok(r.svgs.length >= 3, `charts: ${JSON.stringify(r.svgs)}`);
  for (const s of r.svgs) {
    assert.ok(s.w >= 400 && s.h >= 200, `chart too small: ${JSON.stringify(s)}`);
    assert.ok(s.marks >= 5, `chart without marks: ${JSON.stringify(s)}`);
  }
  assert.ok(r.overflow <= 0, `page is ${r.overflow}px wider than the window`);
  for (const h of ['Top hubs', 'Top authorities', 'Top sites by density of relevant pages']) {
    assert.ok(r.headings.includes(h), `missing section ${h}: ${r.headings}`);
  }
  assert.ok(r.hubLinks.length >= 5, `hub links: ${r.hubLinks}`);
  for (const u of r.hubLinks) assert.match(String(u), /^http:\/\/[a-z0-9.-]+\.test\//);
});
