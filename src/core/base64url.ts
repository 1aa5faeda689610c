/**
 * base64url (RFC 4648 §5, no padding), strict: only its alphabet, a length that encodes whole
 * bytes, and zero trailing bits, so that one byte string has exactly one accepted spelling.
 * Decoding is `Buffer.from(text, 'base64url')` where Node's `Buffer` exists, else jose's
 * `base64url`; both are lenient, so the checks here run first.
 *
 * @module paygate-auth
 */
import * as jose from 'jose/base64url';

interface BufferStatic {
  from(text: string, encoding: 'base64url' | 'latin1'): Uint8Array & { toString(encoding: 'utf8'): string };
}

const NodeBuffer = (globalThis as { Buffer?: BufferStatic }).Buffer;
const utf8 = new TextDecoder();
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** `true` when `text` is unpadded base64url of whole bytes (its trailing bits not checked). */
export function isBase64Url(text: string): boolean {
  return text.length % 4 !== 1 && BASE64URL.test(text);
}

/**
 * `true` when `text` is the one spelling of some bytes in unpadded base64url: its alphabet only, a
 * length that encodes whole bytes, and zero bits after the last byte (2 or 4 bits in a last group
 * of 3 or 2 characters).
 */
export function isCanonicalBase64Url(text: string): boolean {
  const rest = text.length % 4;
  if (rest === 1 || !BASE64URL.test(text)) return false;
  if (rest === 0) return true;
  const last = ALPHABET.indexOf(text.charAt(text.length - 1));
  return (last & (rest === 2 ? 0b1111 : 0b11)) === 0;
}

/** Decodes base64url to bytes. The input must already satisfy {@link isBase64Url}. */
export function decodeBase64Url(text: string): Uint8Array {
  return NodeBuffer === undefined ? jose.decode(text) : NodeBuffer.from(text, 'base64url');
}

/** Decodes base64url to a UTF-8 string. The input must already satisfy {@link isBase64Url}. */
export function decodeBase64UrlText(text: string): string {
  return NodeBuffer === undefined ? utf8.decode(jose.decode(text)) : NodeBuffer.from(text, 'base64url').toString('utf8');
}

/** Encodes bytes as unpadded base64url. */
export function encodeBase64Url(bytes: Uint8Array): string {
  return jose.encode(bytes);
}

/** The bytes of an ASCII string (a JWS signing input). */
export function asciiBytes(text: string): Uint8Array {
  if (NodeBuffer !== undefined) return NodeBuffer.from(text, 'latin1');
  const out = new Uint8Array(text.length);
  for (let index = 0; index < text.length; index += 1) out[index] = text.charCodeAt(index);
  return out;
}
