/**
 * The framework-agnostic heart every adapter calls: header → token → verified context → scopes.
 * It never throws for a client's fault: it returns `{ ok: true, auth }` or `{ ok: false, error }`.
 */
import type { AuthContext } from '../core/auth-context.js';
import { AuthError, ConfigurationError, isAuthError } from '../core/errors.js';
import {
  DEFAULT_SCOPE_POLICY,
  type NormalizedScopeRequirement,
  type ScopeRequirement,
  normalizeScopeRequirement,
  satisfiesScopes,
} from '../core/scopes.js';
import type { Verifier } from '../core/verifier.js';
import { type AuthorizationInput, bearerCredentials, isB64Token, notB64Token } from './authorization.js';

/** The outcome of {@link authenticate}. */
export type AuthResult = { readonly ok: true; readonly auth: AuthContext } | { readonly ok: false; readonly error: AuthError };

/** What {@link authenticate} reads of a request. */
export interface AuthenticateInput {
  /** Every `Authorization` value received (Node's `req.headersDistinct.authorization`), or the one value. */
  readonly authorization: AuthorizationInput;
  /**
   * Scopes this route needs on top of the default policy (at least one known scope): a scope, an
   * array (all of), `{ allOf }` or `{ anyOf }`, read afresh on each call; or, cheaper, the result
   * of `normalizeScopeRequirement()` built once with the route.
   * @default undefined (the default policy only)
   */
  readonly requiredScopes?: ScopeRequirement | NormalizedScopeRequirement;
}

/** The verifier members {@link authenticate} uses. */
export type AuthenticatingVerifier = Pick<Verifier, 'verify' | 'maxTokenBytes'>;

/** A requirement as given: one already normalized (adapters build theirs once) is used as it is. */
export type AnyRequirement = ScopeRequirement | NormalizedScopeRequirement;

function insufficient(requirement: NormalizedScopeRequirement, granted: ReadonlySet<string>): AuthError {
  const list = requirement.scopes.join(', ');
  const message =
    requirement === DEFAULT_SCOPE_POLICY
      ? `The token grants none of the gateway's scopes (${list}).`
      : `The token lacks ${requirement.mode === 'allOf' ? 'all of' : 'any of'} the scopes this route needs (${list}).`;
  const facts = {
    rule: 'scopes',
    expected: { mode: requirement.mode, scopes: requirement.scopes },
    actual: [...granted],
  } as const;
  return new AuthError('insufficient_scope', message, { requiredScopes: requirement.scopes, facts });
}

/**
 * The scope failure of `auth` against `requirement` alone, or `null`: for a context that has
 * already met the default policy (every context `authenticate()` passed), so that a route's own
 * scopes are checked without checking the policy again.
 * @throws {TypeError} when `requirement` is malformed (a server misconfiguration).
 */
export function requirementFailure(auth: AuthContext, requirement: AnyRequirement): AuthError | null {
  const required = normalizeScopeRequirement(requirement);
  return satisfiesScopes(auth.scopes, required) ? null : insufficient(required, auth.scopes);
}

/**
 * The scope failure of `auth` against the default policy and `requirement`, or `null`.
 * @throws {TypeError} when `requirement` is malformed (a server misconfiguration).
 */
export function scopeFailure(auth: AuthContext, requirement?: AnyRequirement): AuthError | null {
  if (!satisfiesScopes(auth.scopes, DEFAULT_SCOPE_POLICY)) return insufficient(DEFAULT_SCOPE_POLICY, auth.scopes);
  if (requirement === undefined) return null;
  const required = normalizeScopeRequirement(requirement);
  return satisfiesScopes(auth.scopes, required) ? null : insufficient(required, auth.scopes);
}

/**
 * A route's own scope check, for `requireScopes(...)`: where no verification ran (`auth` is `null`
 * or `undefined`) it fails as a {@link ConfigurationError} (500), never as a pass.
 */
export function authorizeScopes(
  auth: AuthContext | null | undefined,
  requirement: AnyRequirement,
): { readonly ok: true } | { readonly ok: false; readonly error: AuthError | ConfigurationError } {
  if (auth === null || auth === undefined) {
    return {
      ok: false,
      error: new ConfigurationError('requireScopes() ran where no verification did: mount the auth middleware before it.'),
    };
  }
  const error = scopeFailure(auth, requirement);
  return error === null ? { ok: true } : { ok: false, error };
}

/**
 * Authenticates one request: extracts the bearer token, verifies it, applies the scope policy.
 * Resolves `{ ok: false, error }` for every client fault; rejects only for a server fault (a
 * malformed `requiredScopes`, a bug).
 */
export async function authenticate(verifier: AuthenticatingVerifier, input: AuthenticateInput): Promise<AuthResult> {
  if (input.requiredScopes !== undefined) normalizeScopeRequirement(input.requiredScopes);
  let token: string | undefined;
  try {
    token = bearerCredentials(input.authorization, verifier.maxTokenBytes);
    const auth = await verifier.verify(token);
    const error = scopeFailure(auth, input.requiredScopes);
    return error === null ? { ok: true, auth } : { ok: false, error };
  } catch (error) {
    if (!isAuthError(error)) throw error;
    // Credentials that are not even a b64token are the request's fault, not the token's.
    if (error.code === 'malformed_token' && token !== undefined && !isB64Token(token)) return { ok: false, error: notB64Token() };
    return { ok: false, error };
  }
}
