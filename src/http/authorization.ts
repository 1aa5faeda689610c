/**
 * The `Authorization` header (RFC 6750 §2.1): `Bearer <b64token>`, scheme
 * case-insensitive. Several values, or a join of several, are `invalid_request`.
 */
import { AuthError } from '../core/errors.js';

/** Every `Authorization` value received: none, one, or each of several headers. */
export type AuthorizationInput = string | readonly string[] | null | undefined;

/** RFC 6750 b64token. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

function missing(): AuthError {
  return new AuthError('missing_token', 'The request carries no bearer token.');
}

function invalidRequest(message: string): AuthError {
  return new AuthError('invalid_request', message);
}

function single(authorization: AuthorizationInput): string | undefined {
  if (authorization === undefined || authorization === null) return undefined;
  if (typeof authorization === 'string') return authorization;
  if (!Array.isArray(authorization)) throw invalidRequest('The Authorization header is not a string.');
  if (authorization.length > 1) throw invalidRequest('The request carries more than one Authorization header.');
  const [value] = authorization;
  if (value !== undefined && typeof value !== 'string') throw invalidRequest('The Authorization header is not a string.');
  return value;
}

/** `true` when `token` is an RFC 6750 b64token. */
export function isB64Token(token: string): boolean {
  return B64TOKEN.test(token);
}

/**
 * The bearer token of a request, every rule of {@link extractBearerToken} applied but the b64token
 * syntax. For `authenticate()`, which leaves the characters to the verifier (a token that is not
 * a b64token is never a compact JWS, so the verifier finds it malformed before anything else) and
 * tells the two apart only then: a well-formed token is not scanned twice.
 * @throws {AuthError} `missing_token`, `invalid_request` or `token_too_large`.
 */
export function bearerCredentials(authorization: AuthorizationInput, maxTokenBytes: number): string {
  const value = single(authorization)?.trim();
  if (value === undefined || value === '') throw missing();
  const space = value.indexOf(' ');
  const scheme = space === -1 ? value : value.slice(0, space);
  if (scheme.toLowerCase() !== 'bearer') throw missing();
  const token = space === -1 ? '' : value.slice(space + 1).replace(/^ +/, '');
  if (token === '') throw invalidRequest('The Bearer credentials are empty.');
  if (token.length > maxTokenBytes) {
    throw new AuthError('token_too_large', `The token is larger than ${maxTokenBytes} bytes.`);
  }
  if (token.includes(',') || token.includes(' ')) {
    throw invalidRequest('The Authorization header carries more than one credential.');
  }
  return token;
}

/** The error of credentials that are not a b64token. */
export function notB64Token(): AuthError {
  return invalidRequest('The Bearer credentials are not a b64token (RFC 6750).');
}

/**
 * The bearer token of a request.
 * @param maxTokenBytes a longer token is `token_too_large`, before it is inspected further
 * @throws {AuthError} `missing_token`, `invalid_request` or `token_too_large`.
 */
export function extractBearerToken(authorization: AuthorizationInput, maxTokenBytes: number): string {
  const token = bearerCredentials(authorization, maxTokenBytes);
  if (!isB64Token(token)) throw notB64Token();
  return token;
}
