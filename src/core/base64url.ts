/**
 * base64url (RFC 4648 §5, no padding) decoding, with Node's `Buffer` as a fast path and a portable
 * decoder elsewhere. Callers check the alphabet first; these functions only decode.
 *
 * @module paygate-auth
 */

interface BufferStatic {
  from(value: string, encoding: 'base64url' | 'latin1'): Uint8Array;
}
interface Utf8Printable {
  toString(encoding: 'utf8'): string;
}

const NodeBuffer = (globalThis as { Buffer?: BufferStatic }).Buffer;
const utf8 = new TextDecoder();
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const LOOKUP = new Uint8Array(128).fill(255);
for (let index = 0; index < ALPHABET.length; index += 1) LOOKUP[ALPHABET.charCodeAt(index)] = index;

/** Only base64url characters, no padding, and a length that can encode whole bytes. */
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** `true` when `text` is unpadded base64url of whole bytes. */
export function isBase64Url(text: string): boolean {
  return text.length % 4 !== 1 && BASE64URL.test(text);
}

function decodePortable(text: string): Uint8Array {
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  let bits = 0;
  let value = 0;
  let offset = 0;
  for (let index = 0; index < text.length; index += 1) {
    value = (value << 6) | (LOOKUP[text.charCodeAt(index)] as number);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[offset] = (value >> bits) & 0xff;
      offset += 1;
    }
  }
  return out;
}

/** Decodes base64url to bytes. The input must already satisfy {@link isBase64Url}. */
export function decodeBase64Url(text: string): Uint8Array {
  return NodeBuffer ? NodeBuffer.from(text, 'base64url') : decodePortable(text);
}

/** Decodes base64url to a UTF-8 string. The input must already satisfy {@link isBase64Url}. */
export function decodeBase64UrlText(text: string): string {
  if (!NodeBuffer) return utf8.decode(decodePortable(text));
  return (NodeBuffer.from(text, 'base64url') as unknown as Utf8Printable).toString('utf8');
}

/** The bytes of an ASCII string (the JWS signing input). */
export function asciiBytes(text: string): Uint8Array {
  if (NodeBuffer) return NodeBuffer.from(text, 'latin1');
  const out = new Uint8Array(text.length);
  for (let index = 0; index < text.length; index += 1) out[index] = text.charCodeAt(index);
  return out;
}

/** Encodes bytes as unpadded base64url. */
export function encodeBase64Url(bytes: Uint8Array): string {
  let out = '';
  let index = 0;
  for (; index + 2 < bytes.length; index += 3) {
    const n = ((bytes[index] as number) << 16) | ((bytes[index + 1] as number) << 8) | (bytes[index + 2] as number);
    out += ALPHABET[(n >> 18) & 63]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + ALPHABET[n & 63]!;
  }
  const rest = bytes.length - index;
  if (rest === 1) {
    const n = (bytes[index] as number) << 16;
    out += ALPHABET[(n >> 18) & 63]! + ALPHABET[(n >> 12) & 63]!;
  } else if (rest === 2) {
    const n = ((bytes[index] as number) << 16) | ((bytes[index + 1] as number) << 8);
    out += ALPHABET[(n >> 18) & 63]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]!;
  }
  return out;
}
