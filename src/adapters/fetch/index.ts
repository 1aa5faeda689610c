/**
 * paygate-auth/fetch: `withAuth(handler, options)` for Web `Request` → `Response` handlers (Hono,
 * Cloudflare Workers, Deno, Bun, Node; see docs/runtimes.md for the versions tested). Imports no
 * framework.
 *
 * @example
 * ```ts
 * export const POST = withAuth((request, auth) => Response.json(auth.tenant), { verifier });
 * ```
 *
 * @module paygate-auth/fetch
 */
import type { AuthContext } from '../../core/auth-context.js';
import { describe } from '../../core/options.js';
import { type AdapterOptions, resolveAdapterOptions } from '../../http/adapter-options.js';
import { serializeErrorResponse } from '../../http/error-response.js';
import { type GateFailure, gateRequest, gateScopes } from '../../http/request-gate.js';
import { type RequireScopesArguments, requirementFromArguments } from '../../http/scope-arguments.js';

/** Options of {@link withAuth}: a verifier (or its options), `requiredScopes`, `realm`, `allowPreflight`, `forwardErrors`, `exposeHints`. */
export type WithAuthOptions = AdapterOptions;
export type { AuthContext, RequireScopesArguments };

/** A handler given the verified caller; `Auth` is `AuthContext | null` when preflights are let through. */
export type AuthenticatedHandler<Args extends unknown[], Auth extends AuthContext | null = AuthContext> = (
  request: Request,
  auth: Auth,
  ...rest: Args
) => Response | Promise<Response>;

/** A Web handler: the runtime's own `(request, ...rest)` signature. */
export type FetchHandler<Args extends unknown[]> = (request: Request, ...rest: Args) => Promise<Response>;

/** The failure's answer, its Content-Length set: a runtime answering a HEAD without the body keeps it. */
function answer(failure: GateFailure): Response {
  if (failure.response === undefined) throw failure.error;
  const { status, headers, text } = serializeErrorResponse(failure.response);
  return new Response(text, { status, headers });
}

/**
 * Verifies each request, then calls `handler(request, auth, ...rest)` with the runtime's extra
 * arguments (Workers' `env, ctx`, Next's `context`) passed on; the request is not changed.
 * Failures are answered (or, with `forwardErrors`, the returned promise rejects with them).
 */
export function withAuth<Args extends unknown[]>(
  handler: AuthenticatedHandler<Args>,
  options: WithAuthOptions & { readonly allowPreflight?: false | undefined },
): FetchHandler<Args>;
export function withAuth<Args extends unknown[]>(
  handler: AuthenticatedHandler<Args, AuthContext | null>,
  options: WithAuthOptions,
): FetchHandler<Args>;
export function withAuth<Args extends unknown[]>(handler: AuthenticatedHandler<Args>, options: WithAuthOptions): FetchHandler<Args> {
  if (typeof handler !== 'function') {
    // withAuth(options, handler): the order of Express's and Koa's auth(options), swapped.
    const swapped = typeof options === 'function' ? ': the arguments are swapped, write withAuth(handler, { verifier })' : '';
    throw new TypeError(`withAuth: handler must be a function, got ${describe(handler)}${swapped}`);
  }
  const settings = resolveAdapterOptions('withAuth', options);
  return async (request: Request, ...rest: Args) => {
    // A cached token is answered at once: the handler is called without waiting a turn.
    const pending = gateRequest(settings, request);
    const result = pending instanceof Promise ? await pending : pending;
    if (!result.ok) return answer(result);
    return handler(request, result.auth as AuthContext, ...rest); // null only where allowPreflight let it through
  };
}

/**
 * Wraps a `withAuth` handler with a route's scope check: several scopes are all needed; or one
 * scope, array, `{ allOf }` or `{ anyOf }`. A CORS preflight that `allowPreflight` let through
 * reaches the handler with `auth` still `null`; anywhere else no verification ran (`auth` is
 * `null`) it fails as a configuration error (500).
 *
 * @example
 * ```ts
 * export const POST = withAuth(requireScopes('pay:processPayments')((request, auth) => Response.json(auth.tenant)), { verifier });
 * ```
 */
export function requireScopes(
  ...scopes: RequireScopesArguments
): <Args extends unknown[]>(handler: AuthenticatedHandler<Args>) => AuthenticatedHandler<Args, AuthContext | null> {
  const requirement = requirementFromArguments(scopes);
  return (handler) =>
    async (request, auth, ...rest) => {
      const result = gateScopes(request, auth, requirement);
      if (!result.ok) return answer(result);
      return handler(request, auth as AuthContext, ...rest);
    };
}
