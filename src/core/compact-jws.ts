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

/** Parses `token` as a compact JWS. @throws {AuthError} `malformed_token`. */
export function parseCompactJws(token: string): CompactJws {
  if (!COMPACT.test(token)) {
    throw malformed('The token is not three base64url segments separated by dots (no padding, no other characters).');
  }
  const first = token.indexOf('.');
  const second = token.indexOf('.', first + 1);
  const encodedHeader = token.slice(0, first);
  const encodedPayload = token.slice(first + 1, second);
  const encodedSignature = token.slice(second + 1);
  if (encodedHeader.length % 4 === 1 || encodedPayload.length % 4 === 1 || encodedSignature.length % 4 === 1) {
    throw malformed('A token segment has a length that base64url cannot produce.');
  }
  const header = parseJsonObject(decodeBase64UrlText(encodedHeader));
  if (header === undefined) throw malformed('The token header is not a JSON object.');
  const payload = parseJsonObject(decodeBase64UrlText(encodedPayload));
  if (payload === undefined) throw malformed('The token payload is not a JSON object.');
  return {
    header,
    payload,
    signingInput: token.slice(0, second),
    signature: decodeBase64Url(encodedSignature),
  };
}
