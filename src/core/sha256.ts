/**
 * SHA-256, for every fingerprint and digest the package takes (an idempotency key's body, a
 * registry's entries, a token named in output). Node's `createHash` where `node:crypto` is
 * reachable: a short input is hashed on this thread at once, where each WebCrypto
 * `subtle.digest` is a job handed to another thread and back (most of a payment link's own CPU
 * before, in `npm run bench:fleet:links`). WebCrypto elsewhere (workerd, browsers).
 */
import { loadNodeCrypto } from './node-crypto.js';

const encoder = new TextEncoder();

/** The SHA-256 of `data` (text is hashed as UTF-8). */
export async function sha256(data: Uint8Array | string): Promise<Uint8Array> {
  const nodeCrypto = loadNodeCrypto();
  if (nodeCrypto !== undefined) return new Uint8Array(nodeCrypto.createHash('sha256').update(data).digest());
  const subtle = (globalThis as { crypto?: { subtle?: { digest(algorithm: string, data: Uint8Array): Promise<ArrayBuffer> } } }).crypto
    ?.subtle;
  if (subtle === undefined) throw new TypeError('SHA-256 needs node:crypto or globalThis.crypto.subtle, which this runtime lacks');
  return new Uint8Array(await subtle.digest('SHA-256', typeof data === 'string' ? encoder.encode(data) : data));
}

/** Each byte's two hex digits. */
const HEX_DIGITS = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/** `bytes` in lower-case hex. */
export function hex(bytes: Uint8Array): string {
  let text = '';
  for (const byte of bytes) text += HEX_DIGITS[byte] as string;
  return text;
}

/** The SHA-256 of `data` in lower-case hex (by Node's hash itself where it is reachable). */
export async function sha256Hex(data: Uint8Array | string): Promise<string> {
  const nodeCrypto = loadNodeCrypto();
  if (nodeCrypto !== undefined) return nodeCrypto.createHash('sha256').update(data).digest('hex');
  return hex(await sha256(data));
}
