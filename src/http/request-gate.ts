/**
 * What every adapter does with a request, framework-neutral: let a CORS preflight through when
 * allowed, else authenticate; and, for `requireScopes(...)`, check a route's scopes. A failure
 * comes with the response to send, or none when the adapter's options forward failures. The
 * outcome comes at once when the verifier answers at once (a cached token), so that the adapter
 * calls the framework's next step in the same turn; else as a promise.
 */
import type { AuthContext } from '../core/auth-context.js';
import { isAuthError } from '../core/errors.js';
import type { NormalizedScopeRequirement } from '../core/scopes.js';
import type { AdapterSettings } from './adapter-options.js';
import { type AnyRequirement, type AuthResult, authenticateChecked, authorizeScopes, requirementFailure } from './authenticate.js';
import { DEFAULT_REALM, type ErrorResponse, toErrorResponse } from './error-response.js';
import { type HeadersInput, readHeader } from './headers-input.js';
import { isCorsPreflight } from './preflight.js';

/** The request members the gate reads: Node's `IncomingMessage` or a Web `Request`. */
export interface GatedRequest {
  readonly method?: string | undefined;
  readonly headers: HeadersInput;
  /** Node's `headersDistinct`: every `Authorization` value received (`headers` is read without it). */
  readonly headersDistinct?: Readonly<Record<string, readonly string[] | undefined>>;
  /**
   * Node's raw header lines (name, value, name, value…), read in preference to `headersDistinct`:
   * Node builds that for every header on first use, which costs an Express route a tenth of its
   * throughput.
   */
  readonly rawHeaders?: readonly string[];
}

/** A failure and, unless failures are forwarded to the framework, the response to send. */
export interface GateFailure {
  readonly ok: false;
  /** An `AuthError`, a `ConfigurationError`, or (a server fault) whatever was thrown. */
  readonly error: unknown;
  /** `undefined` when the adapter's options forward failures to the framework. */
  readonly response: ErrorResponse | undefined;
}

/** The outcome of {@link gateRequest}: the context (`null` for an allowed preflight), or a failure. */
export type GateResult = { readonly ok: true; readonly auth: AuthContext | null } | GateFailure;

/**
 * Where a gated request keeps the settings it ran with, for its `requireScopes(...)`: a symbol
 * property on the request object (a `WeakMap` would make every request an ephemeron for the
 * garbage collector to trace).
 */
const GATED_WITH: unique symbol = Symbol('paygate-auth.gatedWith');

const UNGATED: Pick<AdapterSettings, 'realm' | 'forwardErrors' | 'exposeHints'> = {
  realm: DEFAULT_REALM,
  forwardErrors: false,
  exposeHints: false,
};

/**
 * Marks a request the gate let through unverified as a CORS preflight (`allowPreflight`), so that
 * its `requireScopes(...)` passes it on rather than fail it as a configuration error. Set on the
 * preflight path alone: a verified request carries nothing.
 */
const LET_THROUGH: unique symbol = Symbol('paygate-auth.preflightLetThrough');

type Gated = { [GATED_WITH]?: AdapterSettings; [LET_THROUGH]?: true };

/**
 * Records `settings` on `request`, unless `requireScopes(...)` would answer as they say anyway and
 * has no refusal to report (the verifier has no `onEvent`): for a request let through unverified
 * (Fastify's `config.auth: false`), so that its `requireScopes(...)` fails as the settings say.
 */
export function remember(request: object, settings: AdapterSettings): void {
  if (
    settings.realm === UNGATED.realm &&
    settings.forwardErrors === UNGATED.forwardErrors &&
    settings.exposeHints === UNGATED.exposeHints &&
    settings.verifier.reportRefusal === undefined
  )
    return;
  if (Object.isExtensible(request)) (request as Gated)[GATED_WITH] = settings;
}

const PREFLIGHT: GateResult = Object.freeze({ ok: true, auth: null });

const PASSED = Object.freeze({ ok: true } as const);

/** Lets `request`, a real CORS preflight, through unverified, marking it for its `requireScopes(...)`. */
function letThrough(request: GatedRequest): GateResult {
  if (Object.isExtensible(request)) (request as Gated)[LET_THROUGH] = true;
  return PREFLIGHT;
}

/**
 * `true` when `auth` is `null` because the gate let `request` through as a CORS preflight, and it
 * is one still (its method not rewritten since): the one case where no verification ran that
 * `requireScopes(...)` passes.
 */
function letThroughAsPreflight(request: object, auth: AuthContext | null | undefined): boolean {
  return auth === null && (request as Gated)[LET_THROUGH] === true && isCorsPreflight(request as GatedRequest);
}

/**
 * `error` as a failure of a request gated with `settings`: answered as they say, or forwarded.
 * For an adapter's own refusals outside the gate (a route's malformed configuration, say).
 */
export function failure(error: unknown, settings: Pick<AdapterSettings, 'realm' | 'forwardErrors' | 'exposeHints'>): GateFailure {
  if (settings.forwardErrors) return { ok: false, error, response: undefined };
  return {
    ok: false,
    error,
    response: toErrorResponse(error, { realm: settings.realm, exposeHints: settings.exposeHints }),
  };
}

/** Every `Authorization` value among Node's raw header lines: none, one, or several (appended, so linear in the lines). */
function authorizationLines(lines: readonly string[]): string | readonly string[] | undefined {
  let found: string | string[] | undefined;
  for (let index = 0; index + 1 < lines.length; index += 2) {
    const name = lines[index] as string;
    if (name.length !== 13 || name.toLowerCase() !== 'authorization') continue;
    const value = lines[index + 1] as string;
    if (found === undefined) found = value;
    else if (typeof found === 'string') found = [found, value];
    else found.push(value);
  }
  return found;
}

/**
 * The `Authorization` value(s) of `request`. Each member is read once: on an Express request
 * (whose prototype Express replaces) every property read is a slow, uncached look-up.
 */
function authorizationOf(request: GatedRequest): string | readonly string[] | null | undefined {
  const lines = request.rawHeaders;
  if (Array.isArray(lines)) return authorizationLines(lines);
  return request.headersDistinct?.authorization ?? readHeader(request.headers, 'authorization');
}

/** A passed authentication has met the default policy: only the route's own scopes remain. */
function settle(result: AuthResult, settings: AdapterSettings, routeScopes: NormalizedScopeRequirement | undefined): GateResult {
  if (!result.ok) return failure(result.error, settings);
  if (routeScopes === undefined) return result;
  const missing = requirementFailure(result.auth, routeScopes);
  if (missing === null) return result;
  settings.verifier.reportRefusal?.(missing, result.auth);
  return failure(missing, settings);
}

/**
 * Authenticates `request` with the adapter's settings, then checks `routeScopes`, normalized when
 * the route was built (both the settings' `requiredScopes` and `routeScopes` must hold). The
 * outcome comes at once when the verifier answers at once, else as a promise; neither throws nor
 * rejects: a failure, a server fault included, comes as a {@link GateFailure}.
 */
export function gateRequest(
  settings: AdapterSettings,
  request: GatedRequest,
  routeScopes?: NormalizedScopeRequirement,
): GateResult | Promise<GateResult> {
  remember(request, settings);
  if (settings.allowPreflight && isCorsPreflight(request)) return letThrough(request);
  let result: AuthResult | Promise<AuthResult>;
  try {
    result = authenticateChecked(settings.verifier, authorizationOf(request), settings.requiredScopes);
  } catch (error) {
    return failure(error, settings);
  }
  if (!(result instanceof Promise)) return settle(result, settings, routeScopes);
  return result.then(
    (settled) => settle(settled, settings, routeScopes),
    (error: unknown) => failure(error, settings),
  );
}

/**
 * A route's `requireScopes(...)` check of `auth` for `request`. A CORS preflight the gate let
 * through (`allowPreflight`) passes, its auth still `null`. Anywhere else no verification ran it
 * fails as a configuration error (500), answered with the default realm unless the request was
 * gated with other settings.
 */
export function gateScopes(
  request: object,
  auth: AuthContext | null | undefined,
  requirement: AnyRequirement,
): { readonly ok: true } | GateFailure {
  const checked = authorizeScopes(auth, requirement);
  if (checked.ok) return checked;
  // Only where the check failed, so a verified request pays nothing for it.
  if (letThroughAsPreflight(request, auth)) return PASSED;
  const gated = (request as Gated)[GATED_WITH];
  if (auth !== null && auth !== undefined && isAuthError(checked.error)) gated?.verifier.reportRefusal?.(checked.error, auth);
  return failure(checked.error, gated ?? UNGATED);
}
