// @ts-check
/**
 * The FOLDOC mini-web (../shared/miniweb/foldoc.tar.gz → target/foldoc): extraction, URL to
 * file, tasks, labelled pages.
 *
 * @module foldoc
 */

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Extracts the tarball into `<target>/foldoc` unless it is there (atomically, by rename).
 * @param {string} target the repository's target/ folder
 * @param {string} tarball
 * @returns {Promise<string>} the mini-web's folder
 */
export async function ensureFoldoc(target, tarball) {
  const dir = path.join(target, 'foldoc');
  if (existsSync(path.join(dir, 'labels.tsv'))) return dir;
  if (!existsSync(tarball)) throw new Error(`FOLDOC tarball not found at ${tarball}`);
  await mkdir(target, { recursive: true });
  const scratch = await mkdtemp(path.join(target, '.foldoc-'));
  try {
    await run('tar', ['xzf', tarball, '-C', scratch], { maxBuffer: 1 << 24 });
    if (!existsSync(path.join(dir, 'labels.tsv'))) {
      await rm(dir, { recursive: true, force: true });
      await rename(path.join(scratch, 'foldoc'), dir);
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return dir;
}

/**
 * The file under sites/ that answers `url`.
 * @param {string} web
 * @param {string} url
 */
export function urlToFile(web, url) {
  const u = new URL(url);
  let p = decodeURIComponent(u.pathname);
  if (p.endsWith('/')) p += 'index.html';
  return path.join(web, 'sites', u.host, p);
}

/**
 * @param {string} web
 * @returns {Promise<{name: string, good: string[], seeds: string[]}[]>}
 */
export async function tasks(web) {
  return JSON.parse(await readFile(path.join(web, 'tasks.json'), 'utf8'));
}

/**
 * Labelled .html pages that are not training examples, with their files, in file order.
 * @param {string} web
 * @param {string} label e.g. /Computing/Networking
 * @returns {Promise<{url: string, file: string}[]>}
 */
export async function labelledNonExamples(web, label) {
  const examples = new Set((await readFile(path.join(web, 'examples.tsv'), 'utf8'))
    .split('\n').filter(Boolean).map((l) => l.split('\t')[1]));
  return (await readFile(path.join(web, 'labels.tsv'), 'utf8'))
    .split('\n').filter(Boolean)
    .map((l) => { const [url, labels] = l.split('\t'); return { url, labels: labels.split('|') }; })
    .filter((r) => r.labels.includes(label) && !examples.has(r.url) && r.url.endsWith('.html'))
    .map((r) => ({ url: r.url, file: urlToFile(web, r.url) }))
    .filter((r) => existsSync(r.file));
}

/**
 * Pages of `host` that FOLDOC gives no topic (off-taxonomy entries), with their files.
 * @param {string} web
 * @param {string} host e.g. unix-pages.test
 * @returns {Promise<{url: string, file: string}[]>}
 */
export async function unlabelledPages(web, host) {
  const labelled = new Set((await readFile(path.join(web, 'labels.tsv'), 'utf8'))
    .split('\n').filter(Boolean).map((l) => l.split('\t')[0]));
  return (await readdir(path.join(web, 'sites', host))).filter((f) => f.endsWith('.html')).sort()
    .map((f) => ({ url: `http://${host}/${f}`, file: path.join(web, 'sites', host, f) }))
    .filter((p) => !labelled.has(p.url) && !/^(index|about)\.html$/.test(path.basename(p.file)));
}
