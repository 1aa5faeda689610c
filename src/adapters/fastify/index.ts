/**
 * paygate-auth/fastify: the `paygateAuth` plugin (also the default export) verifies each request
 * in `onRequest` and sets `request.auth`; route `config.scopes` (all of) or a `requireScopes(...)`
 * preHandler guard a route, and `config.auth: false` makes one public. Not encapsulated, so it
 * covers every route registered after it. Fastify 4.23 or later, and 5.
 *
 * @example
 * ```ts
 * await app.register(paygateAuth, { verifier });
 * app.post('/payments', { config: { scopes: ['pay:processPayments'] } }, (request) => request.auth?.tenant);
 * ```
 *
 * @module paygate-auth/fastify
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import type { AuthContext } from '../../core/auth-context.js';
import { ConfigurationError } from '../../core/errors.js';
import { describe } from '../../core/options.js';
import { type NormalizedScopeRequirement, type ScopeRequirement, normalizeScopeRequirement } from '../../core/scopes.js';
import { type AdapterOptions, type AdapterSettings, resolveAdapterOptions, stableRequirement } from '../../http/adapter-options.js';
import { type GateFailure, type GateResult, failure, gateRequest, gateScopes, remember } from '../../http/request-gate.js';
import { type RequireScopesArguments, requirementFromArguments } from '../../http/scope-arguments.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The verified caller, set in `onRequest`; `null` where no verification ran (`config.auth:
     * false`, an allowed preflight); `undefined` where paygateAuth is not registered (an instance
     * without it, or a sibling plugin of the one that registers it): this type reaches every
     * Fastify request of the program.
     */
    auth?: AuthContext | null;
  }
  interface FastifyContextConfig {
    /**
     * Scopes this route needs on top of the plugin's `requiredScopes`: a scope, an array (all of),
     * `{ allOf }` or `{ anyOf }`.
     * @default undefined
     */
    scopes?: ScopeRequirement | NormalizedScopeRequirement | undefined;
    /**
     * `false` makes the route public: no verification, `request.auth` stays `null`.
     * @default true
     */
    auth?: boolean | undefined;
  }
}

/** Options of {@link paygateAuth}: a verifier (or its options), `requiredScopes`, `realm`, `allowPreflight`, `forwardErrors`, `exposeHints`. */
export type PaygateAuthOptions = AdapterOptions;
export type { AuthContext, RequireScopesArguments };

function fail(failure: GateFailure, reply: FastifyReply): FastifyReply {
  if (failure.response === undefined) throw failure.error;
  return reply.code(failure.response.status).headers(failure.response.headers).send(JSON.stringify(failure.response.body));
}

/** Checks a route's `config.auth` / `config.scopes` when it is declared; returns its scopes in stable shape. */
function routeScopes(route: Pick<RouteOptions, 'method' | 'url' | 'config'>): NormalizedScopeRequirement | undefined {
  const config: { auth?: unknown; scopes?: unknown } = route.config ?? {};
  const label = `route ${String(route.method)} ${route.url}: config`;
  if (config.auth !== undefined && typeof config.auth !== 'boolean')
    throw new TypeError(`${label}.auth must be a boolean, got ${describe(config.auth)}`);
  if (config.scopes === undefined) return undefined;
  if (config.auth === false) throw new TypeError(`${label}.scopes cannot apply to a route with config.auth false`);
  return stableRequirement(config.scopes, `${label}.scopes`);
}

/**
 * The failure of a request to a route declared before the plugin loaded (before its `register()`,
 * or while it was not awaited), whose `config.scopes` the `onRoute` hook never saw and is
 * malformed: a `ConfigurationError` (500) naming the route and the value, never Fastify's own 500
 * carrying the bare `TypeError`.
 */
function misconfiguredRoute(request: FastifyRequest, settings: AdapterSettings): GateFailure {
  const { method, url, config } = request.routeOptions;
  let reason = 'is malformed';
  try {
    routeScopes({ method: method as RouteOptions['method'], url: url ?? request.url, config });
  } catch (error) {
    reason = (error as Error).message;
  }
  const error = new ConfigurationError(
    `paygateAuth: ${reason}: this route was declared before paygateAuth loaded, so its config was not checked at boot: ` +
      'fix the value, and declare routes after await app.register(paygateAuth, { verifier })',
  );
  return failure(error, settings);
}

/**
 * Options of Fastify's `register()` that reach the plugin but that Fastify ignores for a plugin
 * that is not encapsulated: refused with what to do, rather than as unknown options.
 */
const REGISTER_OPTIONS = ['prefix', 'logLevel', 'logSerializers'] as const;

/** @throws {TypeError} naming a `register()` option found among the plugin's options. */
function refuseRegisterOptions(options: unknown): void {
  if (typeof options !== 'object' || options === null) return;
  for (const name of REGISTER_OPTIONS) {
    const value: unknown = (options as Record<string, unknown>)[name];
    if (value === undefined) continue;
    throw new TypeError(
      `paygateAuth: ${name} is an option of Fastify's register(), which it ignores for this plugin (not encapsulated), ` +
        `got ${describe(value)}: to verify only some routes, register paygateAuth inside a plugin of your own registered with { ${name} }`,
    );
  }
}

const plugin: FastifyPluginAsync<PaygateAuthOptions> = async (fastify, options) => {
  refuseRegisterOptions(options);
  if (fastify.hasRequestDecorator('auth')) {
    // Registered again where it already runs (or another plugin owns request.auth): Fastify's own
    // refusal names only the decorator, and every request would be verified twice.
    throw new TypeError(
      'paygateAuth: request.auth is already declared here (paygateAuth registered on this instance or a parent, ' +
        "or another plugin's request.auth): register paygateAuth once; a route's own scopes go in config.scopes or requireScopes(...)",
    );
  }
  const settings = resolveAdapterOptions('paygateAuth', options);
  fastify.decorateRequest('auth', null);
  fastify.addHook('onRoute', (route) => {
    const scopes = routeScopes(route);
    if (scopes !== undefined) route.config = { ...route.config, scopes };
  });
  const pass = (result: GateResult, request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void => {
    if (result.ok) {
      request.auth = result.auth;
      done();
    } else if (result.response === undefined) done(result.error as Error);
    else void fail(result, reply);
  };
  fastify.addHook('onRequest', (request, reply, done) => {
    const config = request.routeOptions.config;
    if (config?.auth === false) {
      // Unverified, but a requireScopes(...) here still fails (or is forwarded) as the plugin says.
      remember(request.raw, settings);
      return done();
    }
    // Normalized by the onRoute hook when the route was built (so this returns them as they are),
    // unless the route was declared before the plugin loaded: its config is checked here instead.
    let scopes: NormalizedScopeRequirement | undefined;
    try {
      scopes = config?.scopes === undefined ? undefined : normalizeScopeRequirement(config.scopes);
    } catch {
      return pass(misconfiguredRoute(request, settings), request, reply, done);
    }
    const result = gateRequest(settings, request.raw, scopes);
    if (result instanceof Promise) void result.then((settled) => pass(settled, request, reply, done));
    else pass(result, request, reply, done);
  });
};

/** The plugin: verifies every request of every route registered after it (not encapsulated). */
export const paygateAuth = fp(plugin, { fastify: '^4.23.0 || 5.x', name: 'paygate-auth' });
export default paygateAuth;

/**
 * A request of any Fastify server (HTTP/1, HTTPS or HTTP/2), as far as `requireScopes` and
 * `authOf` read it. `FastifyRequest` alone is the default server's (HTTP/1), whose requests an
 * HTTP/2 server's are not.
 */
export type ScopedRequest = Pick<FastifyRequest, 'auth'> & { readonly raw: object };

/**
 * A reply of any Fastify server, as far as `requireScopes` uses it (its generics are ordered
 * differently in Fastify 4 and 5, so they are not named here).
 */
export interface ScopedReply {
  code(statusCode: number): unknown;
}

/** A preHandler: several scopes are all needed; or one scope, array, `{ allOf }` or `{ anyOf }`. */
export function requireScopes(
  ...scopes: RequireScopesArguments
): <Reply extends ScopedReply>(request: ScopedRequest, reply: Reply) => Promise<Reply | undefined> {
  const requirement = requirementFromArguments(scopes);
  return async <Reply extends ScopedReply>(request: ScopedRequest, reply: Reply): Promise<Reply | undefined> => {
    const result = gateScopes(request.raw, request.auth, requirement);
    if (result.ok) return undefined;
    // Any server's reply has what `fail` uses; only its generics differ from the default server's.
    fail(result, reply as unknown as FastifyReply);
    return reply;
  };
}

/**
 * `request.auth` as the verified caller, for a route behind the plugin and `config.scopes` or a
 * `requireScopes(...)` preHandler. Fastify's types cannot carry what a hook checked to the
 * handler, so `request.auth` stays `AuthContext | null | undefined` there; this narrows it. Throws a
 * `ConfigurationError` (500) when no verification ran (`config.auth: false`, an allowed preflight).
 *
 * @example
 * ```ts
 * app.post('/payments', { preHandler: requireScopes('pay:processPayments') }, (request) => authOf(request).tenant);
 * ```
 */
export function authOf(request: Pick<FastifyRequest, 'auth'>): AuthContext {
  const verified = request.auth;
  if (verified == null) {
    throw new ConfigurationError(
      'authOf: request.auth is not set: register paygateAuth before this route, and keep config.auth true on it',
    );
  }
  return verified;
}
