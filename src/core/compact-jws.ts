/**
 * The compact JWS serialization (RFC 7515 §7.1): three unpadded base64url segments separated by
 * dots, the first two JSON objects. Every segment must be canonical base64url (zero trailing
 * bits), so a token has exactly one accepted spelling. Anything else is `malformed_token`.
 *
 * @module paygate-auth
 */
import { decodeCanonicalBase64Url, utf8Text } from './base64url.js';
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

/** The bytes of a segment, which must be their canonical base64url spelling. */
function segment(encoded: string): Uint8Array {
  const bytes = decodeCanonicalBase64Url(encoded);
  if (bytes === undefined) throw malformed(NOT_COMPACT);
  return bytes;
}

function jsonSegment(encoded: string, name: 'header' | 'payload'): Record<string, unknown> {
  const text = utf8Text(segment(encoded));
  const value = parseJsonObject(text);
  if (value === undefined) throw malformed(jsonObjectFailure(`The token ${name}`, text));
  return value;
}

/**
 * Finds the dots of `token`: two non-empty leading segments and a third (the signature).
 * @throws {AuthError} `malformed_token`.
 */
export function locateCompactJws(token: string): CompactJwsLayout {
  const headerEnd = token.indexOf('.');
  const payloadEnd = headerEnd > 0 ? token.indexOf('.', headerEnd + 1) : -1;
  if (payloadEnd <= headerEnd + 1) throw malformed(NOT_COMPACT);
  return { headerEnd, payloadEnd };
}

/** The JOSE header of a located token, decoded. @throws {AuthError} `malformed_token`. */
export function decodeJoseHeader(token: string, layout: CompactJwsLayout): Record<string, unknown> {
  return jsonSegment(token.slice(0, layout.headerEnd), 'header');
}

/**
 * The signature bytes of a located token (empty when its segment is). A third dot falls in this
 * segment, which is then not base64url. @throws {AuthError} `malformed_token`.
 */
export function decodeJwsSignature(token: string, layout: CompactJwsLayout): Uint8Array {
  return segment(token.slice(layout.payloadEnd + 1));
}

/** The payload of a located token, decoded. @throws {AuthError} `malformed_token`. */
export function decodeJwsPayload(token: string, layout: CompactJwsLayout): Record<string, unknown> {
  return jsonSegment(token.slice(layout.headerEnd + 1, layout.payloadEnd), 'payload');
}
