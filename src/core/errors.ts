/**
 * The errors of verification. Every failure is an {@link AuthError} with a stable `code`; callers
 * branch on `code`, never on `message`. Messages name the rule and, where one claim is at fault,
 * the claim: they never contain the token, a key, or a claim's value. A `hint`, for logs, says what
 * was compared (see `hints.ts`); it never contains the token, a signature or key material.
 *
 * @module paygate-auth
 */

/** RFC 6750 §3.1 error codes carried in `WWW-Authenticate`. */
export type BearerErrorCode = 'invalid_request' | 'invalid_token' | 'insufficient_scope';

/** Every code an {@link AuthError} can carry. Stable: new codes may be added, none renamed. */
export type AuthErrorCode =
  | 'missing_token'
  | 'invalid_request'
  | 'token_too_large'
  | 'malformed_token'
  | 'unsupported_algorithm'
  | 'missing_kid'
  | 'invalid_typ'
  | 'unsupported_crit'
  | 'unknown_issuer'
  | 'unknown_key'
  | 'invalid_signature'
  | 'invalid_claim'
  | 'token_expired'
  | 'token_not_yet_valid'
  | 'token_lifetime_exceeded'
  | 'audience_mismatch'
  | 'subject_mismatch'
  | 'tenant_not_allowed'
  | 'issuer_suspended'
  | 'key_revoked'
  | 'jwks_unavailable'
  | 'insufficient_scope';

interface CodeInfo {
  readonly status: number;
  readonly error: BearerErrorCode | null;
  readonly title: string;
}

const invalidToken = (title: string): CodeInfo => ({ status: 401, error: 'invalid_token', title });

/** Status, RFC 6750 error and problem title of each code: the one table every response comes from. */
export const AUTH_ERROR_CODES: Readonly<Record<AuthErrorCode, CodeInfo>> = Object.freeze({
  missing_token: { status: 401, error: null, title: 'Authentication required' },
  invalid_request: { status: 400, error: 'invalid_request', title: 'Invalid authorization request' },
  token_too_large: invalidToken('Token too large'),
  malformed_token: invalidToken('Malformed token'),
  unsupported_algorithm: invalidToken('Unsupported algorithm'),
  missing_kid: invalidToken('Missing key id'),
  invalid_typ: invalidToken('Invalid token type'),
  unsupported_crit: invalidToken('Unsupported critical header'),
  unknown_issuer: invalidToken('Unknown issuer'),
  unknown_key: invalidToken('Unknown signing key'),
  invalid_signature: invalidToken('Invalid signature'),
  invalid_claim: invalidToken('Invalid claim'),
  token_expired: invalidToken('Token expired'),
  token_not_yet_valid: invalidToken('Token not yet valid'),
  token_lifetime_exceeded: invalidToken('Token lifetime exceeded'),
  audience_mismatch: invalidToken('Audience mismatch'),
  subject_mismatch: invalidToken('Subject mismatch'),
  tenant_not_allowed: invalidToken('Tenant not allowed'),
  issuer_suspended: invalidToken('Issuer suspended'),
  key_revoked: invalidToken('Signing key revoked'),
  jwks_unavailable: { status: 503, error: null, title: 'Signing keys unavailable' },
  insufficient_scope: { status: 403, error: 'insufficient_scope', title: 'Insufficient scope' },
});

/** Extra facts an {@link AuthError} may carry. */
export interface AuthErrorOptions {
  /** The claim at fault, for claim errors. */
  readonly claim?: string;
  /** Seconds the client should wait before retrying (`jwks_unavailable`). */
  readonly retryAfter?: number;
  /** The scopes the route needs, for `insufficient_scope` (its `scope="…"` challenge). */
  readonly requiredScopes?: readonly string[];
  /** The registered issuer the token named, once known (never sent to the client). */
  readonly issuer?: string;
  /** The underlying failure (a network error, say); never sent to the client. */
  readonly cause?: unknown;
  /**
   * For the integrator's logs: what was compared (the audiences expected against the token's, the
   * kids held against the token's…). Quotes only values the client sent and public configuration;
   * never the token, a signature or key material. Sent to clients only with `exposeHints`.
   */
  readonly hint?: string;
}

/**
 * A verification failure. `code` is stable; `status` and `error` are the HTTP status and RFC 6750
 * error code the response carries.
 */
export class AuthError extends Error {
  override readonly name = 'AuthError';
  readonly code: AuthErrorCode;
  readonly status: number;
  /** RFC 6750 error code, or `null` where the challenge carries none (`missing_token`, `jwks_unavailable`). */
  readonly error: BearerErrorCode | null;
  readonly title: string;
  readonly claim: string | undefined;
  readonly retryAfter: number | undefined;
  readonly requiredScopes: readonly string[] | undefined;
  readonly issuer: string | undefined;
  /**
   * What was compared, for logs and `verify_failure` events (`undefined` where nothing helps more
   * than the message): see {@link AuthErrorOptions.hint}.
   */
  readonly hint: string | undefined;

  constructor(code: AuthErrorCode, message: string, options: AuthErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const info = AUTH_ERROR_CODES[code];
    this.code = code;
    this.status = info.status;
    this.error = info.error;
    this.title = info.title;
    this.claim = options.claim;
    this.retryAfter = options.retryAfter;
    this.requiredScopes = options.requiredScopes;
    this.issuer = options.issuer;
    this.hint = options.hint;
  }
}

/**
 * A copy of `error` carrying `hint` (its stack kept): errors may be shared between callers (one
 * failed JWKS download answers every waiting request), so a hint about one token is never written
 * into an error another caller holds.
 */
export function withHint(error: AuthError, hint: string): AuthError {
  const copy = new AuthError(error.code, error.message, {
    claim: error.claim,
    retryAfter: error.retryAfter,
    requiredScopes: error.requiredScopes,
    issuer: error.issuer,
    cause: error.cause,
    hint,
  });
  copy.stack = error.stack;
  return copy;
}

/** `true` when `value` is an {@link AuthError} (also across duplicated copies of the package). */
export function isAuthError(value: unknown): value is AuthError {
  return (
    value instanceof AuthError ||
    (value instanceof Error && value.name === 'AuthError' && typeof (value as AuthError).code === 'string' &&
      Object.hasOwn(AUTH_ERROR_CODES, (value as AuthError).code))
  );
}

/** A claim missing or of the wrong type. */
export function invalidClaim(claim: string, message: string): AuthError {
  return new AuthError('invalid_claim', message, { claim });
}

/**
 * A server-side misconfiguration met while handling a request (a scope check mounted where no
 * verification ran, say). Answered as 500: never a pass, never the client's fault.
 */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
  readonly code = 'configuration_error' as const;
  readonly status = 500;
}
