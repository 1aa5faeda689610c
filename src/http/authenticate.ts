/**
 * The framework-agnostic heart every adapter calls: header → token → verified context → scopes.
 * It never throws for a client's fault: it returns `{ ok: true, auth }` or `{ ok: false, error }`,
 * at once when the verifier answers at once (a cached token), else as a promise.
 */
import type { AuthContext } from '../core/auth-context.js';
import { AuthError, ConfigurationError, isAuthError } from '../core/errors.js';
import { describe, methodsOption, optionNames, rejectUnknownOptions } from '../core/options.js';
import {
  DEFAULT_SCOPE_POLICY,
  type NormalizedScopeRequirement,
  type ScopeRequirement,
  normalizeScopeRequirement,
  satisfiesScopes,
} from '../core/scopes.js';
import type { Verifier } from '../core/verifier.js';
import { type AuthorizationInput, readBearerToken } from './authorization.js';

/** The members of {@link AuthenticateInput}: any other is refused, naming the nearest. */
const AUTHENTICATE_INPUT_NAMES = optionNames<AuthenticateInput>({ authorization: true, requiredScopes: true });

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
  readonly requiredScopes?: ScopeRequirement | NormalizedScopeRequirement | undefined;
}

/**
 * The verifier members {@link authenticate} uses: `verify`, and `verifyNow` where the verifier has
 * it (every verifier from `createVerifier()` does), so that a cached token is answered at once;
 * `holds`, where it has it, so that a token it verified is not read through the grammar again;
 * `reportRefusal`, where set, hears of each scope refusal (403), for the verifier's `onEvent`.
 */
export type AuthenticatingVerifier = Pick<Verifier, 'verify'> & Partial<Pick<Verifier, 'verifyNow' | 'holds' | 'reportRefusal'>>;

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
 * scopes, normalized when the route was built, are checked without checking the policy again.
 */
export function requirementFailure(auth: AuthContext, requirement: NormalizedScopeRequirement): AuthError | null {
  return satisfiesScopes(auth.scopes, requirement) ? null : insufficient(requirement, auth.scopes);
}

/** The scope failure of `auth` against the default policy and `requirement` (normalized), or `null`. */
function policyFailure(auth: AuthContext, requirement: NormalizedScopeRequirement | undefined): AuthError | null {
  if (!satisfiesScopes(auth.scopes, DEFAULT_SCOPE_POLICY)) return insufficient(DEFAULT_SCOPE_POLICY, auth.scopes);
  return requirement === undefined ? null : requirementFailure(auth, requirement);
}

/**
 * The scope failure of `auth` against the default policy and `requirement`, or `null`.
 * @throws {TypeError} when `requirement` is malformed (a server misconfiguration).
 */
export function scopeFailure(auth: AuthContext, requirement?: AnyRequirement): AuthError | null {
  return policyFailure(auth, requirement === undefined ? undefined : normalizeScopeRequirement(requirement));
}

/**
 * A route's own scope check, for `requireScopes(...)`: where no verification ran (`auth` is `null`
 * or `undefined`) it fails as a {@link ConfigurationError} (500), never as a pass.
 * @throws {TypeError} when `requirement` is malformed (a server misconfiguration).
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
  let error: AuthError | null;
  try {
    error = scopeFailure(auth, requirement);
  } catch (thrown) {
    // Only where the check threw, so a verified request pays nothing for it: an auth value that
    // another library set (express-jwt's req.auth is the token's payload) has no set of scopes.
    const scopes: unknown = (auth as { scopes?: unknown }).scopes;
    if (typeof (scopes as { has?: unknown } | null | undefined)?.has === 'function') throw thrown;
    return {
      ok: false,
      error: new ConfigurationError(
        `requireScopes() found an auth value whose scopes are not a set (got ${describe(scopes)}): it was set by something ` +
          "other than this package's auth middleware; mount that middleware before requireScopes(...).",
      ),
    };
  }
  return error === null ? { ok: true } : { ok: false, error };
}

/** `auth` judged against the scopes: the result {@link authenticate} answers; a refusal is reported to the verifier. */
function judged(verifier: AuthenticatingVerifier, auth: AuthContext, requirement: NormalizedScopeRequirement | undefined): AuthResult {
  const error = policyFailure(auth, requirement);
  if (error === null) return { ok: true, auth };
  verifier.reportRefusal?.(error, auth);
  return { ok: false, error };
}

/**
 * Checks a verifier: `verify`, and `verifyNow` and `holds` where present (a hand-made verifier
 * may have `verify` alone), must be functions.
 * @throws {TypeError} naming `owner` and the value found otherwise.
 */
export function checkVerifier(owner: string, value: unknown): AuthenticatingVerifier {
  const given = value as Partial<AuthenticatingVerifier> | null;
  // A test issuer (paygate-auth/testing) given in the verifier's place: known by its shape, as
  // this module may not import the kit.
  const issuerLike = given as { token?: unknown; entry?: unknown } | null;
  if (typeof issuerLike === 'object' && issuerLike !== null && typeof issuerLike.token === 'function' && given?.verify === undefined) {
    throw new TypeError(
      `${owner}: verifier must be a verifier from createVerifier(), got a test issuer (it has token(), no verify()): ` +
        'pass createTestVerifier(issuer) from paygate-auth/testing',
    );
  }
  const methods = ['verify', ...(['verifyNow', 'holds'] as const).filter((name) => given?.[name] !== undefined)];
  return methodsOption<AuthenticatingVerifier>(owner, 'verifier', value, methods, 'a verifier from createVerifier()');
}

/** A failure of the verification as a result; anything but an `AuthError` (a bug) is thrown on. */
function failed(error: unknown): AuthResult {
  if (!isAuthError(error)) throw error;
  return { ok: false, error };
}

/**
 * {@link authenticate} with its input already checked (the adapters check theirs once, when they
 * are built): the token read, verified and judged against the scopes.
 */
export function authenticateChecked(
  verifier: AuthenticatingVerifier,
  authorization: AuthorizationInput,
  requirement: NormalizedScopeRequirement | undefined,
): AuthResult | Promise<AuthResult> {
  let verified: AuthContext | Promise<AuthContext>;
  try {
    const token = readBearerToken(authorization, verifier);
    verified = verifier.verifyNow === undefined ? verifier.verify(token) : verifier.verifyNow(token);
  } catch (error) {
    return failed(error);
  }
  if (!(verified instanceof Promise)) return judged(verifier, verified, requirement);
  return verified.then((auth) => judged(verifier, auth, requirement), failed);
}

/**
 * Authenticates one request: extracts the bearer token, verifies it, applies the scope policy.
 *
 * The result comes at once when the verifier answers at once (a token in its result cache, still
 * valid: the common case of a client reusing its token), and as a promise otherwise. `await`
 * takes both; code that must not wait a turn of the event loop tests `instanceof Promise`:
 *
 * ```ts
 * const pending = authenticate(verifier, { authorization });
 * const result = pending instanceof Promise ? await pending : pending;
 * ```
 *
 * Every client fault is a `{ ok: false, error }` result, never an exception. A malformed
 * `requiredScopes` or an unknown member of `input` (a misspelt `requiredScope`: server
 * misconfigurations) throws a `TypeError` at once; anything but an
 * `AuthError` from the verifier (a bug) is thrown on as it came: at once, or as the rejection.
 */
export function authenticate(verifier: AuthenticatingVerifier, input: AuthenticateInput): AuthResult | Promise<AuthResult> {
  // A misspelt member (`requiredScope`) would drop the route's scopes: refused, in JavaScript too.
  // The loop costs a comparison or two per call; the full check runs only on a stranger, or on an
  // input that is no object (named, not a property read of null).
  if (typeof input !== 'object' || input === null) rejectUnknownOptions('authenticate', input, AUTHENTICATE_INPUT_NAMES);
  for (const key in input) {
    if (key !== 'authorization' && key !== 'requiredScopes') rejectUnknownOptions('authenticate', input, AUTHENTICATE_INPUT_NAMES);
  }
  const requirement = input.requiredScopes === undefined ? undefined : normalizeScopeRequirement(input.requiredScopes);
  try {
    return authenticateChecked(verifier, input.authorization, requirement);
  } catch (error) {
    // Only where something was thrown (a verified request pays nothing): a verifier that is none
    // is named, rather than the TypeError it caused.
    checkVerifier('authenticate', verifier);
    throw error;
  }
}
