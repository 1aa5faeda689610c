/**
 * The `Authorization` header (RFC 6750 §2.1): `Bearer <b64token>`, scheme case-insensitive. One
 * regular expression reads the scheme and the token's grammar in one pass over the value; only a
 * value it refuses is looked at again, to say why. Several values, or a join of several, are
 * `invalid_request`. The token's size is the verifier's rule (`maxTokenBytes`), checked there
 * first, so it lives in one place. A token the verifier already holds (one it verified, a
 * well-formed compact JWS, whose characters all belong to the b64token grammar) is recognised
 * by its scheme and its place in the value alone: the grammar is not read over it again.
 */
import { AuthError } from '../core/errors.js';
import { kindOf } from '../core/hint-text.js';
import { functionOption } from '../core/options.js';

/** Every `Authorization` value received: none, one, or each of several headers. */
export type AuthorizationInput = string | readonly string[] | null | undefined;

/**
 * `Bearer`, one or more spaces, an RFC 6750 b64token, white space around the whole: spaces, tabs
 * (HTTP's optional white space) and line ends, never another character JavaScript's `\s` or
 * `trim()` takes for white space (a no-break space, a vertical tab, a form feed): a token followed
 * by one is no b64token, and a proxy in front would read it otherwise. Linear: the token's
 * characters, its `=` padding and the trailing white space are disjoint classes, so no character
 * can be matched two ways.
 */
const BEARER = /^[ \t\r\n]*bearer +([A-Za-z0-9\-._~+/]+=*)[ \t\r\n]*$/i;

/** `true` for the white space {@link BEARER} allows around the value. */
function isWhiteSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0d || code === 0x0a;
}

/** `value` without the white space {@link BEARER} allows around it; one pass from each end. */
function trimmed(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isWhiteSpace(value.charCodeAt(start))) start += 1;
  while (end > start && isWhiteSpace(value.charCodeAt(end - 1))) end -= 1;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

/**
 * `Bearer` and its spaces, read from the start of a value already trimmed (sticky: where
 * `lastIndex` says, never further).
 */
const SCHEME = /bearer +/iy;

/**
 * What follows `Bearer` and its spaces in `value`, white space around the whole left out, with no
 * check of its grammar; `undefined` for another shape. Reads the scheme and the white space only.
 */
function credentialsOf(value: string): string | undefined {
  const text = trimmed(value);
  SCHEME.lastIndex = 0;
  return SCHEME.test(text) ? text.slice(SCHEME.lastIndex) : undefined;
}

/** What every refusal asks the client to send instead. */
const SEND = 'send "Authorization: Bearer <token>"';

function missing(): AuthError {
  return new AuthError('missing_token', `The request carries no bearer token: ${SEND}.`);
}

function invalidRequest(message: string): AuthError {
  return new AuthError('invalid_request', message);
}

/**
 * The first place the b64token grammar (RFC 6750) fails: a character outside it, or `=` padding
 * followed by anything but more padding. One native pass, linear (no character can be matched
 * two ways).
 */
const B64TOKEN_FAULT = /[^A-Za-z0-9\-._~+/=]|=(?=[^=])/;

/**
 * The first character of `credentials` (no space or comma in them) that the b64token grammar
 * refuses, as its code point and place, never as itself: client text stays out of the message.
 */
function characterAtFault(credentials: string): string {
  const fault = B64TOKEN_FAULT.exec(credentials);
  // No character at fault and yet refused: the credentials are all padding.
  if (fault === null) return '"=" padding alone, with no token before it,';
  const place = `character ${fault.index + 1}`;
  if (fault[0] === '=') return `"=" padding at ${place}, before the end`;
  const code = (credentials.codePointAt(fault.index) as number).toString(16).toUpperCase().padStart(4, '0');
  return `U+${code} at ${place}`;
}

/** The one value of `authorization`, or `undefined` when there is none. */
function single(authorization: AuthorizationInput): string | undefined {
  if (authorization === undefined || authorization === null) return undefined;
  if (typeof authorization === 'string') return authorization;
  if (!Array.isArray(authorization)) throw invalidRequest(`The Authorization header is ${kindOf(authorization)}, not a string.`);
  if (authorization.length > 1) {
    throw invalidRequest(`The request carries ${authorization.length} Authorization headers: ${SEND}, once.`);
  }
  const [value] = authorization;
  if (value !== undefined && typeof value !== 'string') throw invalidRequest(`The Authorization header is ${kindOf(value)}, not a string.`);
  return value;
}

/**
 * Why `value`, which {@link BEARER} refused, carries no usable token: no credentials or another
 * scheme (`missing_token`), else empty, several or not b64token credentials (`invalid_request`).
 */
function refusal(value: string): AuthError {
  const text = trimmed(value);
  const space = text.indexOf(' ');
  const scheme = space === -1 ? text : text.slice(0, space);
  if (text === '') return missing();
  if (scheme.toLowerCase() !== 'bearer') {
    return new AuthError('missing_token', `The Authorization header uses another scheme than Bearer: ${SEND}.`);
  }
  // The spaces after the scheme: what follows them is the credentials, a tab or a no-break space included.
  let start = space + 1;
  while (text.charCodeAt(start) === 0x20) start += 1;
  const credentials = text.slice(start);
  if (space === -1 || credentials === '') return invalidRequest(`The Bearer credentials are empty: ${SEND}.`);
  if (credentials.includes(',') || credentials.includes(' ')) {
    return invalidRequest(`The Authorization header carries more than one credential: ${SEND}, with one token.`);
  }
  return invalidRequest(
    `The Bearer credentials hold ${characterAtFault(credentials)}, which a b64token (RFC 6750: letters, digits, ` +
      `"-", ".", "_", "~", "+", "/", then "=" padding) does not allow: ${SEND}, the token as issued.`,
  );
}

/** What knows the tokens it verified: a verifier, whose `holds` is called as its method. */
export interface TokenHolder {
  readonly holds?: ((token: string) => boolean) | undefined;
}

/**
 * The bearer token of a request: `Bearer` (any case) and an RFC 6750 b64token, read in one pass;
 * or, when `holds` (the verifier's) says the credentials are a token it verified, `Bearer` alone
 * (such a token is a compact JWS: base64url and dots, all b64token characters, so the answer is
 * the same). Its size is left to the verifier, which checks it before anything else.
 * @throws {AuthError} `missing_token` (no header, an empty one, another scheme) or
 *   `invalid_request` (several headers or credentials, empty credentials, not a b64token).
 * @throws {TypeError} when `holds` is given and is not a function (a server fault).
 */
export function extractBearerToken(authorization: AuthorizationInput, holds?: (token: string) => boolean): string {
  functionOption('extractBearerToken', 'holds', holds);
  return readBearerToken(authorization, holds === undefined ? undefined : { holds });
}

/**
 * {@link extractBearerToken} asking `holder.holds(…)` as a method of `holder` (a verifier), so that
 * a verifier whose `holds` reads `this` (a class wrapping another) works as its `verify` does.
 */
export function readBearerToken(authorization: AuthorizationInput, holder: TokenHolder | undefined): string {
  const value = typeof authorization === 'string' ? authorization : single(authorization);
  if (value === undefined) throw missing();
  if (holder?.holds !== undefined) {
    const credentials = credentialsOf(value);
    if (credentials !== undefined && holder.holds(credentials)) return credentials;
  }
  const match = BEARER.exec(value);
  if (match === null) throw refusal(value);
  return match[1] as string;
}
