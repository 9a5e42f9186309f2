// @ts-check
/**
 * Base64 for byte arrays of any size (btoa/atob work on binary strings; build them in chunks so
 * large models do not overflow the argument limit of `String.fromCharCode`).
 *
 * @module base64
 */

const CHUNK = 0x8000;

/**
 * @param {Uint8Array} bytes
 * @returns {string}
 */
export function bytesToBase64(bytes) {
  /** @type {string[]} */
  const parts = [];
  for (let i = 0; i < bytes.length; i += CHUNK) {
    parts.push(String.fromCharCode.apply(null, /** @type {any} */ (bytes.subarray(i, i + CHUNK))));
  }
  return btoa(parts.join(''));
}

/**
 * @param {string} text base64 (throws on anything else)
 * @returns {Uint8Array}
 */
export function base64ToBytes(text) {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
