/**
 * The compact JWS serialization (RFC 7515 §7.1): three unpadded base64url segments separated by
 * dots, the first two JSON objects. Anything else is `malformed_token`. The alphabet is checked
 * as the segments are decoded (see `screenBase64Url`), so a token is not scanned twice.
 *
 * @module paygate-auth
 */
import { decodeBase64UrlChecked, decodeBase64UrlTextChecked, screenBase64Url } from './base64url.js';
import { AuthError } from './errors.js';
import { jsonObjectFailure, parseJsonObject } from './json-object.js';

const NOT_COMPACT = 'The token is not three base64url segments separated by dots (no padding, no other characters).';

function malformed(message: string): AuthError {
  return new AuthError('malformed_token', message);
}

/** Where the segments of a compact JWS end. */
export interface CompactJwsLayout {
  /** Index of the first dot: the header is `token.slice(0, headerEnd)`. */
  readonly headerEnd: number;
  /** Index of the second dot: the signing input is `token.slice(0, payloadEnd)`. */
  readonly payloadEnd: number;
}

/**
 * Finds the dots of `token` and checks what can be checked without decoding: its characters
 * (cheaply, see `screenBase64Url`), two non-empty leading segments, and lengths base64url can
 * produce. The decoders below check the rest. @throws {AuthError} `malformed_token`.
 */
export function locateCompactJws(token: string): CompactJwsLayout {
  if (!screenBase64Url(token)) throw malformed(NOT_COMPACT);
  const headerEnd = token.indexOf('.');
  const payloadEnd = headerEnd > 0 ? token.indexOf('.', headerEnd + 1) : -1;
  if (payloadEnd <= headerEnd + 1) throw malformed(NOT_COMPACT);
  if (headerEnd % 4 === 1 || (payloadEnd - headerEnd - 1) % 4 === 1 || (token.length - payloadEnd - 1) % 4 === 1) {
    throw malformed('A token segment has a length that base64url cannot produce.');
  }
  return { headerEnd, payloadEnd };
}

function jsonSegment(encoded: string, name: 'header' | 'payload'): Record<string, unknown> {
  const text = decodeBase64UrlTextChecked(encoded);
  if (text === undefined) throw malformed(NOT_COMPACT);
  const value = parseJsonObject(text);
  if (value === undefined) throw malformed(jsonObjectFailure(`The token ${name}`, text));
  return value;
}

/** The JOSE header of a located token, decoded. @throws {AuthError} `malformed_token`. */
export function decodeJoseHeader(encodedHeader: string): Record<string, unknown> {
  return jsonSegment(encodedHeader, 'header');
}

/** The payload of a located token, decoded. @throws {AuthError} `malformed_token`. */
export function decodeJwsPayload(token: string, layout: CompactJwsLayout): Record<string, unknown> {
  return jsonSegment(token.slice(layout.headerEnd + 1, layout.payloadEnd), 'payload');
}

/** The signature bytes of a located token (empty when its segment is). @throws {AuthError} `malformed_token`. */
export function decodeJwsSignature(token: string, layout: CompactJwsLayout): Uint8Array {
  const signature = decodeBase64UrlChecked(token.slice(layout.payloadEnd + 1));
  if (signature === undefined) throw malformed(NOT_COMPACT);
  return signature;
}
