/**
 * The errors of verification. Every failure is an {@link AuthError} with a stable `code`; callers
 * branch on `code`, never on `message`. Messages name the rule and, where one claim is at fault,
 * the claim: they never contain the token, a key, or a claim's value. The rule that failed records
 * what it compared as data, typed per code ({@link FailureFacts}, in `facts.ts`), where it failed;
 * the `hint` for logs is written from those facts only when someone reads it (see `hints.ts`).
 * Nothing decodes the token again.
 */
import type { FactCode, FailureFacts, FailureFactsInput, InvalidClaimFacts, PassedFacts } from './facts.js';
import { renderHint } from './hints.js';

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

/** The verifier's rules, in the order they run, then `scopes` (the policy of `authenticate()`). */
export type RuleName =
  | 'size'
  | 'format'
  | 'alg'
  | 'kid'
  | 'typ'
  | 'crit'
  | 'iss'
  | 'suspended'
  | 'key'
  | 'signature'
  | 'exp'
  | 'expt'
  | 'iat'
  | 'nbf'
  | 'expiry'
  | 'not_before'
  | 'lifetime'
  | 'aud'
  | 'sub'
  | 'tenant_ern'
  | 'scope'
  | 'tenant_name'
  | 'user_ern'
  | 'scopes';

/**
 * One rule's outcome as a verifier's `trace` receives it: passed, with what it compared, or failed,
 * with what it compared and the code the verification answers (`facts.code`). Keyed on `passed`,
 * then `rule` (passed) or `code` (failed).
 */
export type RuleOutcome = (PassedFacts & { readonly passed: true }) | (FailureFacts & { readonly passed: false });

/** Receives each rule's outcome, in order, as a verification runs (see `VerifierOptions.trace`). */
export type RuleTrace = (outcome: RuleOutcome) => void;

/** Extra facts an {@link AuthError} of code `C` may carry. */
export interface AuthErrorOptions<C extends AuthErrorCode = AuthErrorCode> {
  /**
   * The claim at fault, for claim errors.
   * @default undefined
   */
  readonly claim?: string | undefined;
  /**
   * Seconds the client should wait before retrying (`jwks_unavailable`): the `Retry-After` sent.
   * @default undefined (no `Retry-After`)
   */
  readonly retryAfter?: number | undefined;
  /**
   * The scopes the route needs, for `insufficient_scope` (its `scope="…"` challenge).
   * @default undefined (no `scope` in the challenge)
   */
  readonly requiredScopes?: readonly string[] | undefined;
  /**
   * The registered issuer the token named, once known (never sent to the client).
   * @default undefined
   */
  readonly issuer?: string | undefined;
  /**
   * The underlying failure (a network error, say); never sent to the client.
   * @default undefined
   */
  readonly cause?: unknown;
  /**
   * What the failing rule compared, the shape of code `C`'s facts (rendered into
   * {@link AuthError.hint} when read); `code`, when left out, is the error's.
   * @default undefined (nothing compared: no `facts`, no `hint`)
   */
  readonly facts?: FailureFactsInput<Extract<C, FactCode>> | undefined;
}

/** `C`, inferred from the code alone: facts of another code are an error, not a wider `C`. */
type FromCode<C> = [C][C extends unknown ? 0 : never];

/**
 * A verification failure. `code` is stable; `status` and `error` are the HTTP status and RFC 6750
 * error code the response carries. `facts.code` is `code`, so `switch (error.facts?.code)`
 * narrows the facts to that code's shape.
 */
export class AuthError<C extends AuthErrorCode = AuthErrorCode> extends Error {
  override readonly name = 'AuthError';
  readonly code: C;
  readonly status: number;
  /** RFC 6750 error code, or `null` where the challenge carries none (`missing_token`, `jwks_unavailable`). */
  readonly error: BearerErrorCode | null;
  readonly title: string;
  readonly claim: string | undefined;
  readonly retryAfter: number | undefined;
  readonly requiredScopes: readonly string[] | undefined;
  readonly issuer: string | undefined;
  /** What the failing rule compared, as data; `undefined` where nothing was compared. */
  readonly facts: FailureFacts<Extract<C, FactCode>> | undefined;
  #hint: string | undefined | null = null;

  /**
   * `instanceof` as for any class, typed so that it narrows a caught value to
   * `AuthError<AuthErrorCode>` (its `code` the union); a generic class's `prototype` would narrow
   * it to `AuthError<any>`. TypeScript 5.3 or later reads it.
   */
  static override [Symbol.hasInstance](value: unknown): value is AuthError {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class `instanceof` names, a subclass included
    return Function.prototype[Symbol.hasInstance].call(this, value);
  }

  constructor(code: C, message: string, options: AuthErrorOptions<FromCode<C>> = {}) {
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
    this.facts = withCode(code, options.facts);
  }

  /**
   * For the integrator's logs: what was compared (the audiences expected against the token's, the
   * kids held against the token's…), written from {@link facts} on first read; one line, cut and
   * escaped. Quotes only values the client sent and public configuration; never the token, a
   * signature or key material. Sent to clients only with `exposeHints`.
   */
  get hint(): string | undefined {
    if (this.#hint === null) this.#hint = this.facts === undefined ? undefined : renderHint(this.facts);
    return this.#hint ?? undefined;
  }
}

/** `facts` carrying `code`: as given when they do (no copy), else a copy with it. */
function withCode<C extends AuthErrorCode>(
  code: C,
  facts: FailureFactsInput<Extract<C, FactCode>> | undefined,
): FailureFacts<Extract<C, FactCode>> | undefined {
  if (facts === undefined || facts.code === code) return facts as FailureFacts<Extract<C, FactCode>> | undefined;
  // The input type ties the facts' shape to `code`; only the member is missing.
  return { ...facts, code } as FailureFacts<Extract<C, FactCode>>;
}

/**
 * A copy of `error` naming `issuer` (its stack kept): errors may be shared between callers (one
 * failed JWKS download answers every waiting request), so nothing about one token is written into
 * an error another caller holds.
 */
export function withIssuer(error: AuthError, issuer: string): AuthError {
  const copy = new AuthError(error.code, error.message, {
    claim: error.claim,
    retryAfter: error.retryAfter,
    requiredScopes: error.requiredScopes,
    issuer,
    cause: error.cause,
    facts: error.facts,
  });
  copy.stack = error.stack;
  return copy;
}

/** `true` when `value` is an {@link AuthError} (also across duplicated copies of the package). */
export function isAuthError(value: unknown): value is AuthError {
  return (
    value instanceof AuthError ||
    (value instanceof Error &&
      value.name === 'AuthError' &&
      typeof (value as AuthError).code === 'string' &&
      Object.hasOwn(AUTH_ERROR_CODES, (value as AuthError).code))
  );
}

/** `invalid_claim`: a claim missing, of the wrong type, or not of its shape; `facts` say which and what it held. */
export function invalidClaim(message: string, facts: InvalidClaimFacts): AuthError<'invalid_claim'> {
  return new AuthError('invalid_claim', message, { claim: facts.claim, facts: { code: 'invalid_claim', ...facts } });
}

/**
 * `iss` is not registered, or (`removed`) was removed while its token was being verified;
 * `registered` lists the issuers that are.
 */
export function unknownIssuer(iss: string, registered: readonly string[], removed = false): AuthError<'unknown_issuer'> {
  const message = removed ? 'The token\'s issuer ("iss") is no longer registered.' : 'The token\'s issuer ("iss") is not registered.';
  const facts = { code: 'unknown_issuer', rule: 'iss', claim: 'iss', expected: registered, actual: iss } as const;
  return new AuthError('unknown_issuer', message, { facts: removed ? { ...facts, removed } : facts });
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
