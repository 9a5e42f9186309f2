// @ts-check
/**
 * Where the browser suites find the repository's pieces, and the binaries they drive
 * (FORAGER_BIN, CHROMIUM_PATH override the defaults).
 *
 * @module paths
 */

import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** tests/browser. */
export const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const REPO = path.resolve(HERE, '..', '..');
export const TARGET = path.join(REPO, 'target');
export const EXTENSION = path.join(REPO, 'extension');
/** Screenshots and benchmark figures. */
export const OUT = path.join(HERE, 'out');
export const TARBALL = path.resolve(REPO, '..', 'shared', 'miniweb', 'foldoc.tar.gz');
export const FORAGER = process.env.FORAGER_BIN || path.join(TARGET, 'release', 'forager');
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
