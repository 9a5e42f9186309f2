// @ts-check
/**
 * Talking to `forager native` directly, as Chrome does: 32-bit native-endian length + JSON.
 *
 * @module native-host
 */

import { spawn } from 'node:child_process';
import os from 'node:os';

/**
 * @param {unknown} obj a JSON value
 * @returns {Buffer} the frame
 */
export function encodeFrame(obj) {
  return lengthPrefixed(Buffer.from(JSON.stringify(obj), 'utf8'));
}

/**
 * @param {Buffer} body
 * @returns {Buffer}
 */
export function lengthPrefixed(body) {
  const head = Buffer.alloc(4);
  if (os.endianness() === 'LE') head.writeUInt32LE(body.length); else head.writeUInt32BE(body.length);
  return Buffer.concat([head, body]);
}

/** A host process with a frame reader on its stdout. */
export class NativeProcess {
  /**
   * @param {string} bin
   * @param {string[]} args
   * @param {NodeJS.ProcessEnv} env
   */
  constructor(bin, args, env) {
    this.child = spawn(bin, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.buf = Buffer.alloc(0);
    /** @type {any[]} */
    this.frames = [];
    /** @type {(() => void) | null} */
    this.wake = null;
    this.stderr = '';
    /** @type {Promise<{code: number | null, signal: NodeJS.Signals | null}>} */
    this.exit = new Promise((resolve) => this.child.on('exit', (code, signal) => resolve({ code, signal })));
    this.child.stdin.on('error', () => {}); // EPIPE after the host exits is expected in some cases
    this.child.stderr.on('data', (d) => { this.stderr += d; });
    this.child.stdout.on('data', (d) => {
      this.buf = Buffer.concat([this.buf, d]);
      while (this.buf.length >= 4) {
        const n = os.endianness() === 'LE' ? this.buf.readUInt32LE(0) : this.buf.readUInt32BE(0);
        if (this.buf.length < 4 + n) break;
        const text = this.buf.subarray(4, 4 + n).toString('utf8');
        this.buf = this.buf.subarray(4 + n);
        let frame;
        try { frame = JSON.parse(text); } catch { frame = { unparseable: text.slice(0, 200) }; }
        this.frames.push(frame);
      }
      this.wake?.();
    });
  }

  /** @param {unknown} obj */
  send(obj) { this.child.stdin.write(encodeFrame(obj)); }

  /** @param {Buffer} bytes */
  sendRaw(bytes) { this.child.stdin.write(bytes); }

  /** Closes the host's stdin (EOF). */
  end() { this.child.stdin.end(); }

  /**
   * The next frame, or null after `timeoutMs` or when the process exited without one.
   * @param {number} timeoutMs
   * @returns {Promise<any | null>}
   */
  async next(timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    while (!this.frames.length) {
      const left = deadline - Date.now();
      if (left <= 0 || this.child.exitCode !== null || this.child.signalCode !== null) {
        return this.frames.shift() ?? null;
      }
      await new Promise((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 100));
        t.unref();
        this.wake = () => { clearTimeout(t); resolve(undefined); };
      });
      this.wake = null;
    }
    return this.frames.shift();
  }

  /**
   * Waits for the exit; after `timeoutMs` reports `timedOut` and, unless `kill` is false, kills
   * the process.
   * @param {number} timeoutMs
   * @param {{kill?: boolean}} [options]
   * @returns {Promise<{timedOut: boolean, code: number | null, signal: NodeJS.Signals | null}>}
   */
  async exited(timeoutMs, { kill = true } = {}) {
    /** @type {any} */
    let timer;
    const timeout = new Promise((resolve) => { timer = setTimeout(() => resolve('timeout'), timeoutMs); timer.unref(); });
    const r = await Promise.race([this.exit, timeout]);
    clearTimeout(timer);
    if (r === 'timeout') {
      if (!kill) return { timedOut: true, code: null, signal: null };
      this.child.kill('SIGKILL');
      return { timedOut: true, ...(await this.exit) };
    }
    return { timedOut: false, .../** @type {{code: number | null, signal: NodeJS.Signals | null}} */ (r) };
  }

  kill() {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}
