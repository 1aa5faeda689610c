/**
 * The compact JWS serialization (RFC 7515 §7.1): three unpadded base64url segments separated by
 * dots, the first two JSON objects encoded as well-formed UTF-8. Every segment must be canonical
 * base64url (zero trailing bits), so a token has exactly one accepted spelling. Anything else is
 * `malformed_token`.
 */
import { decodeCanonicalBase64Url, utf8Text } from './base64url.js';
import { formatMemberPath } from './duplicate-members.js';
import { AuthError } from './errors.js';
import type { FormatProblem } from './facts.js';
import { parseJsonObject, repeatedMember } from './json-object.js';

const NOT_COMPACT = 'The token is not three base64url segments separated by dots (no padding, no other characters).';

/** A token's segment. */
export type JwsSegment = 'header' | 'payload' | 'signature';

/** `malformed_token`; a token of other than three segments (a JWE has five) is reported as such. */
function malformed(message: string, actual: FormatProblem, token: string): AuthError {
  const count = token.split('.').length;
  return new AuthError('malformed_token', message, {
    facts: { code: 'malformed_token', rule: 'format', actual: count === 3 ? actual : { segments: count } },
  });
}

/** Where the segments of a compact JWS end. */
export interface CompactJwsLayout {
  /** Index of the first dot: the header is `token.slice(0, headerEnd)`. */
  readonly headerEnd: number;
  /** Index of the second dot: the signing input is `token.slice(0, payloadEnd)`. */
  readonly payloadEnd: number;
}

/** The bytes of a segment, which must be their canonical base64url spelling. */
function segment(token: string, encoded: string, name: JwsSegment): Uint8Array {
  const bytes = decodeCanonicalBase64Url(encoded);
  if (bytes === undefined) throw malformed(NOT_COMPACT, { segment: name, problem: 'base64url' }, token);
  return bytes;
}

/** Reads UTF-8 strictly: bytes that are not well-formed UTF-8 throw, where a lenient reader puts U+FFFD. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Whether `text`, decoded from `bytes`, is what they spell: a decoder puts U+FFFD for bytes that
 * are not UTF-8, so only a text holding one (rare; never in ASCII, where the search costs nothing)
 * is read again, strictly.
 */
function isWellFormed(text: string, bytes: Uint8Array): boolean {
  if (!text.includes('\ufffd')) return true;
  try {
    strictUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function jsonSegment(token: string, encoded: string, name: 'header' | 'payload'): Record<string, unknown> {
  const bytes = segment(token, encoded, name);
  const text = utf8Text(bytes);
  // Bytes that are not UTF-8 are no JSON text (RFC 8259 §8.1): readers would replace, refuse or
  // reinterpret them, each seeing other claims in one signed token.
  if (!isWellFormed(text, bytes)) {
    throw malformed(
      `The token ${name} is not UTF-8 text; a JWT's header and payload are JSON encoded as UTF-8.`,
      { segment: name, problem: 'json' },
      token,
    );
  }
  const value = parseJsonObject(text);
  if (value !== undefined) return value;
  const member = repeatedMember(text);
  if (member === undefined) throw malformed(`The token ${name} is not a JSON object.`, { segment: name, problem: 'json' }, token);
  const path = formatMemberPath(member);
  const message = `The token ${name} repeats the member ${path.startsWith('[') ? path : `"${path}"`}; each member name may appear once.`;
  throw malformed(message, { segment: name, problem: 'repeated_member', member }, token);
}

/**
 * Finds the dots of `token`: two non-empty leading segments and a third (the signature). A third
 * dot falls in the signature, which is then not base64url.
 * @throws {AuthError} `malformed_token`.
 */
export function locateCompactJws(token: string): CompactJwsLayout {
  const headerEnd = token.indexOf('.');
  const payloadEnd = headerEnd > 0 ? token.indexOf('.', headerEnd + 1) : -1;
  if (payloadEnd <= headerEnd + 1) throw malformed(NOT_COMPACT, { segments: token.split('.').length }, token);
  return { headerEnd, payloadEnd };
}

/** The JOSE header of a located token, decoded. @throws {AuthError} `malformed_token`. */
export function decodeJoseHeader(token: string, layout: CompactJwsLayout): Record<string, unknown> {
  return jsonSegment(token, token.slice(0, layout.headerEnd), 'header');
}

/** The signature bytes of a located token (empty when its segment is). @throws {AuthError} `malformed_token`. */
export function decodeJwsSignature(token: string, layout: CompactJwsLayout): Uint8Array {
  return segment(token, token.slice(layout.payloadEnd + 1), 'signature');
}

/** The payload of a located token, decoded. @throws {AuthError} `malformed_token`. */
export function decodeJwsPayload(token: string, layout: CompactJwsLayout): Record<string, unknown> {
  return jsonSegment(token, token.slice(layout.headerEnd + 1, layout.payloadEnd), 'payload');
}
