/**
 * paygate-auth/hono: `auth(options)`, a Hono middleware that verifies each request and sets
 * `c.var.auth` (`c.get('auth')`); `requireScopes(...)` guards a route, and a handler after it
 * reads `c.get('auth')` as an `AuthContext`, never `null`. Hono 4, on every runtime Hono runs on;
 * loads no framework code (types only).
 *
 * @example
 * ```ts
 * const app = new Hono<{ Variables: AuthVariables }>();
 * app.use(auth({ verifier }));
 * app.post('/payments', requireScopes('pay:processPayments'), (c) => c.json(c.get('auth').tenant));
 * ```
 *
 * @module paygate-auth/hono
 */
import type { Context, MiddlewareHandler, Next } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { AuthContext } from '../../core/auth-context.js';
import { type AdapterOptions, refuseMountedFactory, resolveAdapterOptions } from '../../http/adapter-options.js';
import { serializeErrorResponse } from '../../http/error-response.js';
import { type GateFailure, type GateResult, type GatedRequest, gateRequest, gateScopes } from '../../http/request-gate.js';
import { type RequireScopesArguments, requirementFromArguments } from '../../http/scope-arguments.js';

/**
 * The variables `auth()` sets: `new Hono<{ Variables: AuthVariables }>()` types `c.get('auth')`
 * in every handler. `null` where no verification ran (an allowed preflight). A type, not an
 * interface: Hono before 4.5 bounds `Variables` by `Record<string, unknown>`, which an interface
 * (without an index signature) does not meet.
 */
export type AuthVariables = {
  auth: AuthContext | null;
};

/** The variables after `requireScopes(...)`: the caller is verified, so `c.get('auth')` is never `null`. */
export type VerifiedVariables = {
  auth: AuthContext;
};

/** Options of {@link auth}: a verifier (or its options), `requiredScopes`, `realm`, `allowPreflight`, `forwardErrors`, `exposeHints`. */
export type AuthOptions = AdapterOptions;
export type { AuthContext, RequireScopesArguments };

/**
 * Answers `failure` (through `c.newResponse`, so headers set by earlier middleware, CORS's say,
 * are kept), or throws it to Hono's error path (`app.onError`) when failures are forwarded. Its
 * Content-Length is set here: Hono answers a HEAD with the GET's headers and no body, so a length
 * left to the server would be missing.
 */
function fail(failure: GateFailure, c: Context): Promise<Response> {
  if (failure.response === undefined) throw failure.error;
  const { status, headers, text } = serializeErrorResponse(failure.response);
  return Promise.resolve(c.newResponse(text, status as ContentfulStatusCode, headers));
}

/**
 * The request the gate reads. On `@hono/node-server`, the message Node parsed (`c.env.incoming`,
 * its documented `HttpBindings`): its raw header lines give every `Authorization` value without
 * building the Web `Request`'s `Headers`, which cost a tenth of a bare route's CPU. Elsewhere
 * (Deno, Bun, workerd, `app.request()`), `c.req.raw`.
 */
function gatedRequest(c: Context): GatedRequest & object {
  const incoming: unknown = (c.env as { incoming?: unknown } | undefined)?.incoming;
  if (typeof incoming !== 'object' || incoming === null) return c.req.raw;
  const { rawHeaders, headers } = incoming as { rawHeaders?: unknown; headers?: unknown };
  return Array.isArray(rawHeaders) && typeof headers === 'object' && headers !== null ? (incoming as GatedRequest) : c.req.raw;
}

/** What a middleware returns: its answer, or `next()`'s promise. */
type Outcome = ReturnType<MiddlewareHandler>;

function pass(result: GateResult, c: Context<{ Variables: AuthVariables }>, next: Next): Outcome {
  if (!result.ok) return fail(result, c);
  c.set('auth', result.auth);
  return next();
}

/**
 * Middleware that verifies every request and sets `c.var.auth`; failures are answered (or, with
 * `forwardErrors`, thrown to `app.onError`). A cached token is answered at once: the next
 * handler runs in the same call, with no promise of this middleware's own in between.
 */
export function auth(options: AuthOptions): MiddlewareHandler<{ Variables: AuthVariables }>;
export function auth(options: AuthOptions, ...mounted: unknown[]): MiddlewareHandler<{ Variables: AuthVariables }> {
  refuseMountedFactory('auth', 1 + mounted.length, 'app.use(auth({ verifier }))');
  const settings = resolveAdapterOptions('auth', options);
  return (c, next) => {
    const result = gateRequest(settings, gatedRequest(c));
    return result instanceof Promise ? result.then((settled): Outcome => pass(settled, c, next)) : pass(result, c, next);
  };
}

/**
 * Route middleware: several scopes are all needed; or one scope, array, `{ allOf }` or
 * `{ anyOf }`. The handlers after it read `c.get('auth')` as an `AuthContext` (still `null` on a
 * CORS preflight that `allowPreflight` let through). Anywhere else no verification ran it fails as
 * a configuration error (500), never as a pass.
 */
export function requireScopes(...scopes: RequireScopesArguments): MiddlewareHandler<{ Variables: VerifiedVariables }> {
  const requirement = requirementFromArguments(scopes);
  return (c, next) => {
    const result = gateScopes(gatedRequest(c), c.get('auth') as AuthContext | null | undefined, requirement);
    return result.ok ? next() : fail(result, c);
  };
}
