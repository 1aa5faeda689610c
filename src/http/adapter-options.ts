/**
 * The one options object every framework adapter takes, checked once when the middleware is made.
 */
import { quote, quoteList } from '../core/hint-text.js';
import { booleanOption, describe, rejectUnknownOptions } from '../core/options.js';
import { type NormalizedScopeRequirement, type ScopeRequirement, normalizeScopeRequirement } from '../core/scopes.js';
import { VERIFIER_OPTION_NAMES, type VerifierOptions, createVerifier } from '../core/verifier.js';
import { type AuthenticatingVerifier, checkVerifier } from './authenticate.js';
import { checkRealm } from './error-response.js';

/** The adapter's own options, beside the verifier (or the verifier's options). */
export interface AdapterBaseOptions {
  /**
   * Scopes every request needs on top of the default policy (at least one known scope): a scope,
   * an array (all of), `{ allOf }` or `{ anyOf }`. A route's `requireScopes(...)` adds to it: both
   * must hold. Missing: 403 `insufficient_scope`.
   * @default undefined (the default policy only)
   */
  readonly requiredScopes?: ScopeRequirement | undefined;
  /**
   * The `realm` of every `WWW-Authenticate` challenge sent (printable ASCII, no `"` or `\`).
   * @default 'paygate'
   */
  readonly realm?: string | undefined;
  /**
   * Let a real CORS preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) reach
   * the app unverified, its auth `null`. Every other request, `OPTIONS` included, is verified.
   * @default false
   */
  readonly allowPreflight?: boolean | undefined;
  /**
   * Hand failures to the framework's error path instead of answering them: Express `next(err)`,
   * Fastify's error handler, Koa's upstream middleware (thrown), or a rejected promise from
   * `withAuth`. The error is the `AuthError` itself (`code`, `status`), or a
   * `ConfigurationError` (500); `toErrorResponse(err, { realm, exposeHints })` builds the usual
   * answer from it.
   * @default false (failures are answered with `toErrorResponse(err, { realm, exposeHints })`)
   */
  readonly forwardErrors?: boolean | undefined;
  /**
   * Put each failure's `hint` (what was compared: the audiences expected against the token's, the
   * kids held against the token's…) in the problem+json body as `hint`. Hints never quote a
   * token or key material, but they show any caller parts of this service's configuration: turn
   * this on where the callers are your own integrators (development, staging, a sandbox). The
   * hint is always on the error and in `verify_failure` events, whatever this says.
   * @default false
   */
  readonly exposeHints?: boolean | undefined;
}

/** Options naming a verifier built elsewhere (share one verifier per process). */
export type AdapterOptionsWithVerifier = AdapterBaseOptions & {
  /**
   * The verifier, from `createVerifier(...)`. Required, unless the verifier's own options stand
   * in its place.
   * @default none
   */
  readonly verifier: AuthenticatingVerifier;
} & { readonly [K in keyof VerifierOptions]?: undefined };

/** Options carrying the verifier's own options flat: the adapter builds one verifier, once. */
export type AdapterOptionsWithVerifierOptions = AdapterBaseOptions & VerifierOptions & { readonly verifier?: undefined };

/** Options of every adapter: a verifier, or the options to build one, and the adapter's own. */
export type AdapterOptions = AdapterOptionsWithVerifier | AdapterOptionsWithVerifierOptions;

/** {@link AdapterOptions} checked and resolved. */
export interface AdapterSettings {
  /** The verifier given, or the one built from the verifier's options. */
  readonly verifier: AuthenticatingVerifier;
  /** `requiredScopes`, normalized once when the adapter was built, or `undefined`. */
  readonly requiredScopes: NormalizedScopeRequirement | undefined;
  /** `realm`, or `'paygate'`. */
  readonly realm: string;
  /** `allowPreflight`, or `false`. */
  readonly allowPreflight: boolean;
  /** `forwardErrors`, or `false`. */
  readonly forwardErrors: boolean;
  /** `exposeHints`, or `false`. */
  readonly exposeHints: boolean;
}

/** The options every adapter takes besides the verifier's own (the one list the docs are checked against). */
export const ADAPTER_OPTION_NAMES = ['verifier', 'requiredScopes', 'realm', 'allowPreflight', 'forwardErrors', 'exposeHints'] as const;

/** Every option name an adapter accepts. */
const KNOWN_OPTIONS: ReadonlySet<string> = new Set([...ADAPTER_OPTION_NAMES, ...VERIFIER_OPTION_NAMES]);

/**
 * Checks `requirement` and returns it normalized: a frozen copy made when the middleware or route
 * is built, so it is checked once, and a later change to the array given is not seen.
 * @throws {TypeError} naming `label` when it is malformed.
 */
export function stableRequirement(requirement: unknown, label: string): NormalizedScopeRequirement {
  return normalizeScopeRequirement(requirement, label);
}

function verifierFrom(owner: string, options: Record<string, unknown>): AuthenticatingVerifier {
  // A verifier option given as `undefined` is left out (its default), not the verifier's options.
  const flat = Object.keys(options).filter((key) => VERIFIER_OPTION_NAMES.has(key) && options[key] !== undefined);
  if (options.verifier !== undefined) {
    if (flat.length > 0) {
      throw new TypeError(`${owner}: give verifier or the verifier's options, not both (found ${quote(flat[0] as string)}): remove one`);
    }
    return checkVerifier(owner, options.verifier);
  }
  if (flat.length === 0) {
    const found = 'verifier' in options ? `verifier ${describe(options.verifier)}` : "no verifier and none of the verifier's options";
    throw new TypeError(
      `${owner}: verifier is required, got ${found}: pass { verifier } with a verifier from createVerifier(), ` +
        "or the verifier's options flat (registry, audience, …)",
    );
  }
  if (options.registry === undefined) {
    throw new TypeError(
      `${owner}: registry is required with the verifier's options, got ${quoteList(flat)} without it: ` +
        'add registry: new IssuerRegistry([...]), or pass { verifier } with a verifier from createVerifier()',
    );
  }
  try {
    return createVerifier(Object.fromEntries(flat.map((key) => [key, options[key]])) as unknown as VerifierOptions);
  } catch (error) {
    // Named as the adapter's: the caller wrote auth({...}), not createVerifier(...).
    if (error instanceof TypeError) throw new TypeError(`${owner}: ${error.message}`, { cause: error });
    throw error;
  }
}

/**
 * Refuses a middleware factory called by the framework (`app.use(auth)`, not `app.use(auth({…}))`):
 * it then gets the request and `next` instead of its one options object.
 * @param count how many arguments the factory got
 * @param example the call to write instead
 * @throws {TypeError} naming `owner` and what to write when `count` is more than one.
 */
export function refuseMountedFactory(owner: string, count: number, example: string): void {
  if (count <= 1) return;
  throw new TypeError(
    `${owner}: takes one options object, got ${count} arguments: ${owner} itself was mounted as middleware; ` +
      `call it and mount what it returns: ${example}`,
  );
}

/**
 * Checks an adapter's options and builds its verifier when given the verifier's options.
 * @param owner the name errors start with (`auth`, `paygateAuth`, `withAuth`)
 * @throws {TypeError} naming the option at fault.
 */
export function resolveAdapterOptions(owner: string, options: unknown): AdapterSettings {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(
      `${owner}: options must be an object, got ${describe(options)}: pass { verifier } with a verifier from createVerifier()`,
    );
  }
  rejectUnknownOptions(owner, options, KNOWN_OPTIONS);
  const o = options as Record<string, unknown>;
  return Object.freeze({
    requiredScopes: o.requiredScopes === undefined ? undefined : stableRequirement(o.requiredScopes, `${owner}: requiredScopes`),
    realm: checkRealm(o.realm, `${owner}: realm`),
    allowPreflight: booleanOption(owner, 'allowPreflight', o.allowPreflight, false),
    forwardErrors: booleanOption(owner, 'forwardErrors', o.forwardErrors, false),
    exposeHints: booleanOption(owner, 'exposeHints', o.exposeHints, false),
    verifier: verifierFrom(owner, o),
  });
}
