/**
 * The `Authorization` header (RFC 6750 §2.1): `Bearer <b64token>`, scheme case-insensitive. One
 * regular expression reads the scheme and the token's grammar in one pass over the value; only a
 * value it refuses is looked at again, to say why. Several values, or a join of several, are
 * `invalid_request`. The token's size is the verifier's rule (`maxTokenBytes`), checked there
 * first, so it lives in one place.
 */
import { AuthError } from '../core/errors.js';

/** Every `Authorization` value received: none, one, or each of several headers. */
export type AuthorizationInput = string | readonly string[] | null | undefined;

/**
 * `Bearer`, one or more spaces, an RFC 6750 b64token, white space around the whole. Linear: the
 * token's characters, its `=` padding and the trailing white space are disjoint classes, so no
 * character can be matched two ways.
 */
const BEARER = /^\s*bearer +([A-Za-z0-9\-._~+/]+=*)\s*$/i;

function missing(): AuthError {
  return new AuthError('missing_token', 'The request carries no bearer token.');
}

function invalidRequest(message: string): AuthError {
  return new AuthError('invalid_request', message);
}

/** The one value of `authorization`, or `undefined` when there is none. */
function single(authorization: AuthorizationInput): string | undefined {
  if (authorization === undefined || authorization === null) return undefined;
  if (typeof authorization === 'string') return authorization;
  if (!Array.isArray(authorization)) throw invalidRequest('The Authorization header is not a string.');
  if (authorization.length > 1) throw invalidRequest('The request carries more than one Authorization header.');
  const [value] = authorization;
  if (value !== undefined && typeof value !== 'string') throw invalidRequest('The Authorization header is not a string.');
  return value;
}

/**
 * Why `value`, which {@link BEARER} refused, carries no usable token: no credentials or another
 * scheme (`missing_token`), else empty, several or not b64token credentials (`invalid_request`).
 */
function refusal(value: string): AuthError {
  const trimmed = value.trim();
  const space = trimmed.indexOf(' ');
  const scheme = space === -1 ? trimmed : trimmed.slice(0, space);
  if (trimmed === '' || scheme.toLowerCase() !== 'bearer') return missing();
  const credentials = trimmed.slice(space + 1).trimStart();
  if (space === -1 || credentials === '') return invalidRequest('The Bearer credentials are empty.');
  if (credentials.includes(',') || credentials.includes(' ')) {
    return invalidRequest('The Authorization header carries more than one credential.');
  }
  return invalidRequest('The Bearer credentials are not a b64token (RFC 6750).');
}

/**
 * The bearer token of a request: `Bearer` (any case) and an RFC 6750 b64token, read in one pass.
 * Its size is left to the verifier, which checks it before anything else.
 * @throws {AuthError} `missing_token` (no header, an empty one, another scheme) or
 *   `invalid_request` (several headers or credentials, empty credentials, not a b64token).
 */
export function extractBearerToken(authorization: AuthorizationInput): string {
  const value = typeof authorization === 'string' ? authorization : single(authorization);
  if (value === undefined) throw missing();
  const match = BEARER.exec(value);
  if (match === null) throw refusal(value);
  return match[1] as string;
}
