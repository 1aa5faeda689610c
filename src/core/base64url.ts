/**
 * base64url (RFC 4648 §5, no padding). Token segments are read strictly: a text is accepted only
 * as the one canonical spelling of its bytes (its alphabet only, no padding, a length that encodes
 * whole bytes, zero trailing bits), which is checked by encoding the decoded bytes again and
 * comparing. Decoding is `Buffer.from(text, 'base64url')` where Node's `Buffer` exists, else
 * jose's `base64url`.
 */
import * as jose from 'jose/base64url';

interface NodeBytes extends Uint8Array {
  toString(): string;
  toString(encoding: 'utf8' | 'base64url'): string;
}
interface BufferStatic {
  from(text: string, encoding: 'base64url' | 'latin1'): NodeBytes;
}

const NodeBuffer = (globalThis as { Buffer?: BufferStatic }).Buffer;
/** Keeps a leading byte order mark, as Node's `Buffer` does: a segment behind one is not JSON on any runtime. */
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** `true` when `text` is unpadded base64url of whole bytes (its trailing bits not checked). */
export function isBase64Url(text: string): boolean {
  return text.length % 4 !== 1 && BASE64URL.test(text);
}

/** Decodes base64url to bytes. The input must already satisfy {@link isBase64Url}. */
export function decodeBase64Url(text: string): Uint8Array {
  return NodeBuffer === undefined ? jose.decode(text) : NodeBuffer.from(text, 'base64url');
}

/**
 * The bytes `text` spells when it is their canonical unpadded base64url spelling; `undefined` for
 * anything else (another alphabet, padding, white space, a length that cannot encode whole bytes,
 * non-zero trailing bits).
 */
export function decodeCanonicalBase64Url(text: string): Uint8Array | undefined {
  if (NodeBuffer !== undefined) {
    const bytes = NodeBuffer.from(text, 'base64url');
    return bytes.toString('base64url') === text ? bytes : undefined;
  }
  try {
    const bytes = jose.decode(text);
    return jose.encode(bytes) === text ? bytes : undefined;
  } catch {
    return undefined;
  }
}

/** The UTF-8 text of bytes from {@link decodeCanonicalBase64Url}. */
export function utf8Text(bytes: Uint8Array): string {
  return NodeBuffer === undefined ? utf8.decode(bytes) : (bytes as NodeBytes).toString('utf8');
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
