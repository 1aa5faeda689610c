/**
 * Splits a compact JWS (RFC 7515 §7.1) into its decoded header and payload, the exact signing input
 * and the signature bytes. Anything but three unpadded base64url segments whose first two decode to
 * JSON objects is `malformed_token`.
 *
 * @module paygate-auth
 */
import { decodeBase64Url, decodeBase64UrlText } from './base64url.js';
import { AuthError } from './errors.js';
import { parseJsonObject } from './json-object.js';

/** A compact JWS, decoded but not yet trusted. */
export interface CompactJws {
  readonly header: Record<string, unknown>;
  readonly payload: Record<string, unknown>;
  /** `<header>.<payload>` exactly as received: the bytes the signature covers. */
  readonly signingInput: string;
  readonly signature: Uint8Array;
}

/** Three segments of the base64url alphabet; the signature may be empty (then it cannot verify). */
const COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

function malformed(message: string): AuthError {
  return new AuthError('malformed_token', message);
}

/**
 * The last string found to be of compact JWS shape. The HTTP layer asks {@link isCompactJws} of a
 * bearer token (such a token is a valid RFC 6750 b64token) and hands the same token to the
 * verifier, which then skips a second scan of it: comparing with this string is a pointer
 * comparison, or a memcmp, where the scan is a character-class match of every character.
 */
let lastShaped = '';

/** `true` when `token` is three base64url segments separated by dots (its lengths unchecked). */
export function isCompactJws(token: string): boolean {
  if (token === lastShaped) return true;
  if (!COMPACT.test(token)) return false;
  lastShaped = token;
  return true;
}

/** Where the segments of a well-shaped compact JWS end. */
export interface CompactJwsLayout {
  /** Index of the first dot: the header is `token.slice(0, headerEnd)`. */
  readonly headerEnd: number;
  /** Index of the second dot: the signing input is `token.slice(0, payloadEnd)`. */
  readonly payloadEnd: number;
}

/**
 * Checks the shape of `token` (three base64url segments, each of a length base64url can produce)
 * and finds its dots. @throws {AuthError} `malformed_token`.
 */
export function locateCompactJws(token: string): CompactJwsLayout {
  if (!isCompactJws(token)) {
    throw malformed('The token is not three base64url segments separated by dots (no padding, no other characters).');
  }
  const headerEnd = token.indexOf('.');
  const payloadEnd = token.indexOf('.', headerEnd + 1);
  if (headerEnd % 4 === 1 || (payloadEnd - headerEnd - 1) % 4 === 1 || (token.length - payloadEnd - 1) % 4 === 1) {
    throw malformed('A token segment has a length that base64url cannot produce.');
  }
  return { headerEnd, payloadEnd };
}

/** The JOSE header of a well-shaped token, decoded. @throws {AuthError} `malformed_token`. */
export function decodeJoseHeader(encodedHeader: string): Record<string, unknown> {
  const header = parseJsonObject(decodeBase64UrlText(encodedHeader));
  if (header === undefined) throw malformed('The token header is not a JSON object.');
  return header;
}

/** The payload of a well-shaped token, decoded. @throws {AuthError} `malformed_token`. */
export function decodeJwsPayload(token: string, layout: CompactJwsLayout): Record<string, unknown> {
  const payload = parseJsonObject(decodeBase64UrlText(token.slice(layout.headerEnd + 1, layout.payloadEnd)));
  if (payload === undefined) throw malformed('The token payload is not a JSON object.');
  return payload;
}

/** Parses `token` as a compact JWS. @throws {AuthError} `malformed_token`. */
export function parseCompactJws(token: string): CompactJws {
  const layout = locateCompactJws(token);
  const header = decodeJoseHeader(token.slice(0, layout.headerEnd));
  const payload = decodeJwsPayload(token, layout);
  return {
    header,
    payload,
    signingInput: token.slice(0, layout.payloadEnd),
    signature: decodeBase64Url(token.slice(layout.payloadEnd + 1)),
  };
}
