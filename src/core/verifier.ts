/**
 * The verifier: every rule, in order, over keys from the registered issuer's JWKS only.
 */
import { type AuthContext, createAuthContext } from './auth-context.js';
import { type ClaimPolicy, checkClaims, checkTimeWindow } from './claims.js';
import { decodeJoseHeader, decodeJwsPayload, decodeJwsSignature, locateCompactJws } from './compact-jws.js';
import { CACHE_ADMISSIONS, type CacheAdmission } from './cache-admission.js';
import { AuthError, type RuleTrace, invalidClaim, isAuthError, unknownIssuer, withIssuer } from './errors.js';
import { emit, type VerifierEventListener } from './events.js';
import { kindOf, quote } from './hint-text.js';
import { checkAllowedHosts } from './jwks-address.js';
import type { FetchLike } from './jwks-fetch.js';
import { JwksCache, type KeyLoadReport, type KeySnapshot, type MaxAgeBounds, elapsedMs } from './jwks-cache.js';
import { type RsaAlgorithm, RSA_ALGORITHMS, checkJoseHeader } from './jose-header.js';
import { booleanOption, describe, functionOption, numberOption, rejectUnknownOptions, optionNames } from './options.js';
import { type IssuerEntry, IssuerRegistry, type RegisteredIssuer, type RegistryChange } from './registry.js';
import { type CachedResult, ResultCache } from './result-cache.js';
import { type PreparedKey, type SignatureEngine, type SignatureEngineName, createSignatureEngine } from './signature.js';
import { type KeyHistoryChanges, type KeyHistoryEntry, KeyHistory, checkKeyHistory } from './key-history.js';
import { checkKeySnapshot } from './key-snapshot.js';

function invalidSignature(issuer: string, kid: string, alg: string): AuthError {
  return new AuthError('invalid_signature', "The token's signature does not verify.", {
    facts: { code: 'invalid_signature', rule: 'signature', expected: { issuer, kid }, actual: alg },
  });
}

/** What a verification met, for its event: filled in as the rules run, by reporting verifiers only. */
interface Encounter {
  /** The `kid` of the issuer's key the token was checked against, once found. */
  kid: string | null;
  /** A result-cache entry is being re-checked. */
  cached: boolean;
}

/** Options of {@link createVerifier}. Times are in seconds unless a name says otherwise. */
export interface VerifierOptions {
  /** The trusted issuers: a registry, or its entries. */
  readonly registry: IssuerRegistry | readonly IssuerEntry[];
  /**
   * This service's audience(s): a token's `aud` must name one of them. Required; there is no way
   * to skip the audience check. Each a non-empty string without surrounding white space.
   */
  readonly audience: string | readonly string[];
  /**
   * The clock, in milliseconds since the epoch. Drives every time decision: claims, JWKS max-age,
   * cooldown, back-off and stale window (not network timeouts).
   * @default () => Date.now() (read at each call, so fake timers installed later are honoured)
   */
  readonly now?: (() => number) | undefined;
  /**
   * Seconds of clock skew allowed on `exp`/`expt`, `iat` and `nbf`.
   * @default 30
   */
  readonly clockTolerance?: number | undefined;
  /**
   * Largest token accepted, in bytes; a larger one is `token_too_large` before any parsing.
   * @default 8192
   */
  readonly maxTokenBytes?: number | undefined;
  /**
   * Longest lifetime, `expiry − (nbf ?? iat)`, in seconds; an issuer entry may set its own.
   * @default 86400 (24 h)
   */
  readonly maxTokenLifetime?: number | undefined;
  /**
   * Accepted signature algorithms (RSA only: `none` and HMAC can never be enabled).
   * @default ['RS256']
   */
  readonly algorithms?: readonly RsaAlgorithm[] | undefined;
  /**
   * Seconds a downloaded JWKS is used before it is reloaded (in the background; the held keys
   * verify meanwhile). Keep it under 1 h so that normal rotation never meets an unseen key.
   * @default 600
   */
  readonly jwksMaxAge?: number | undefined;
  /**
   * Seconds a JWKS response's own `Cache-Control` max-age (less its `Age`) is clamped to: it
   * replaces `jwksMaxAge` for that download, at least `min` (also what `no-store` and `no-cache` mean) and at most `max`.
   * A response with no usable `max-age` falls back to `jwksMaxAge`. By default the server may
   * shorten the cache but never lengthen it past `jwksMaxAge`: a key the issuer withdraws (after
   * a compromise, say) stops verifying within `jwksMaxAge` of the withdrawal, whatever the server
   * sends. Set `max` above `jwksMaxAge` to let the server lengthen it. Both from 0 to 86400,
   * `min` ≤ `max`; an omitted bound keeps its default.
   * @default { min: the least of 60, jwksMaxAge and max, max: jwksMaxAge }
   */
  readonly jwksMaxAgeBounds?: { readonly min?: number | undefined; readonly max?: number | undefined } | undefined;
  /**
   * Seconds a new key must have been published before it verifies its first token: one used
   * sooner, counted from the last download that did not list it, is reported as a
   * `key_used_early` event (never for a key in the issuer's first download here).
   * @default 3600 (1 h)
   */
  readonly keyPublishLead?: number | undefined;
  /**
   * Seconds a key may sign for, counted from when this verifier first saw it in the JWKS to the
   * `iat` of a token it verified; beyond, a `key_rotation_overdue` event (rotation about every 48 h,
   * plus a day's margin).
   * @default 259200 (72 h)
   */
  readonly keyMaxAge?: number | undefined;
  /**
   * Seconds for one JWKS download, redirects and body included.
   * @default 5
   */
  readonly jwksTimeout?: number | undefined;
  /**
   * Largest JWKS document read, in bytes; reading stops there.
   * @default 262144 (256 KiB)
   */
  readonly jwksMaxBytes?: number | undefined;
  /**
   * Most entries a JWKS `keys` array may hold, usable or not: a set with more is a failed download
   * (`reason: 'too_many_keys'`, naming the count), and a `keys` snapshot listing more for an issuer
   * is not imported. Each usable key is imported at every download that changes it, so a set of
   * thousands would hold the event loop for seconds. From 1 to 1000.
   * @default 100 (keys)
   */
  readonly jwksMaxKeys?: number | undefined;
  /**
   * Redirects followed per JWKS download, each only within the origin (scheme, host and port) of
   * the registered `jwksUri`. By default none is followed, as jose does: a redirect is a failed
   * download (`reason: 'redirects'`), and one off the origin always is (`'redirect_target'`).
   * @default 0
   */
  readonly jwksMaxRedirects?: number | undefined;
  /**
   * Seconds the last good keys keep verifying past their max-age while they cannot be reloaded
   * (the endpoint fails or is slow); then they stop, and verifications answer `jwks_unavailable`.
   * @default 86400 (24 h)
   */
  readonly jwksStaleWindow?: number | undefined;
  /**
   * Seconds between two refetches caused by an unknown `kid`, per issuer (counted from the last
   * such refetch, not from scheduled loads).
   * @default 30
   */
  readonly jwksCooldown?: number | undefined;
  /**
   * Seconds to wait after a failed download before the next; doubles on each failure up to
   * `jwksBackoffMax`, which it must not exceed. A `Retry-After` from the endpoint lengthens it.
   * @default 1 (or `jwksBackoffMax`, when that is less)
   */
  readonly jwksBackoff?: number | undefined;
  /**
   * Longest back-off between failed downloads, in seconds.
   * @default 60
   */
  readonly jwksBackoffMax?: number | undefined;
  /**
   * Hosts JWKS may be downloaded from although they are special-purpose addresses or names (a
   * JWKS served on a private network, say): each an exact host as a URL names it
   * (`jwks.corp.example`, `10.0.0.5`, `[fd00::5]`), no wildcard, trusted wherever it resolves.
   * Every other download from a loopback (beyond `http:` on loopback), private, link-local,
   * shared or `0.0.0.0/8` address, an IPv4-mapped IPv6 address, a cloud metadata service or a
   * private name fails (`jwks_fetch` `reason: 'address'`): the host as named and, on Node, every
   * address it resolves to when the download connects. Also given to the registries the
   * verifier builds from entries (here and in `setRegistry(entries)`).
   * @default those of the registry in force: the `IssuerRegistry` given here, then each one that
   * `setRegistry()` installs (`postgresRegistry` passes its own on); [] (none) for entries
   */
  readonly jwksAllowedHosts?: readonly string[] | undefined;
  /**
   * The `fetch` used for JWKS downloads, looked up on every download. It gets the checks of the
   * host as named (`jwksAllowedHosts`), not those of the address it connects to: inject one only
   * where that is done elsewhere (an egress proxy that refuses private addresses, say).
   * @default on Node, a `fetch` over `node:http`/`node:https` whose connections refuse the
   * special-purpose addresses a name resolves to (request interceptors that patch
   * `http.request`, such as msw, are honoured); elsewhere `globalThis.fetch`, looked up on every
   * download
   */
  readonly fetch?: FetchLike | undefined;
  /**
   * Cache verified results, keyed on the exact token. A hit is still re-checked for time,
   * suspension, revocation and key removal.
   * @default true
   */
  readonly cache?: boolean | undefined;
  /**
   * Most results cached.
   * @default 10000
   */
  readonly cacheMaxEntries?: number | undefined;
  /**
   * Most token bytes held by the result cache.
   * @default 33554432 (32 MiB)
   */
  readonly cacheMaxBytes?: number | undefined;
  /**
   * When a verified token's result enters the cache: `'second-use'`, on the token's second
   * verification (the first leaves a mark, one number in a fixed table of twice `cacheMaxEntries`
   * marks, so a token used once costs the cache nothing); `'first-use'`, on its first. Choose
   * `'first-use'` when clients present each token exactly twice.
   * @default 'second-use'
   */
  readonly cacheAdmission?: CacheAdmission | undefined;
  /**
   * Keys to start with, from another verifier's `exportKeys()`; used as if downloaded at the
   * snapshot's `fetchedAt`.
   * @default undefined (keys are downloaded on first use)
   */
  readonly keys?: KeySnapshot | undefined;
  /**
   * Which engine checks signatures: `node` (`crypto.verify`: at once when it is the only one in
   * flight, else in libuv's thread pool) or `webcrypto` (`crypto.subtle`). Chosen once, here.
   * @default 'node' where `node:crypto` is available, else 'webcrypto'
   */
  readonly crypto?: SignatureEngineName | undefined;
  /**
   * Receives {@link VerifierEvent}s (each verification's outcome and duration, JWKS fetches, cache
   * hits…) for metrics, traces and logs. Must not throw.
   * @default undefined
   */
  readonly onEvent?: VerifierEventListener | undefined;
  /**
   * Receives each rule's outcome as a verification runs, in order: the rules passed, each with
   * what it compared, then the one that failed (with its code), or none. For tools that explain a
   * token (`paygate-auth doctor` is this verifier with a trace); the result cache is bypassed while
   * a trace is set, so that every rule runs. Must not throw.
   * @default undefined
   */
  readonly trace?: RuleTrace | undefined;
}

/** Seconds a JWKS download may take by default (`jwksTimeout`). */
export const DEFAULT_JWKS_TIMEOUT = 5;

/** Longest `jwksTimeout`, in seconds. */
export const MAX_JWKS_TIMEOUT = 120;

/** A configured verifier. Build one per process and share it. */
export interface Verifier {
  /**
   * Verifies a compact JWS and returns its frozen {@link AuthContext}.
   * @throws {AuthError} for every failure, with its stable `code`.
   */
  verify(token: string): Promise<AuthContext>;
  /**
   * {@link verify} without waiting where nothing needs waiting for: a token found in the result
   * cache, still valid, comes back at once as its `AuthContext` (and one no longer valid throws its
   * `AuthError` at once); every other verification comes back as a promise, as from `verify`.
   * For adapters that pass a request on in the same turn of the event loop: test the result with
   * `instanceof Promise`, or `await` it, which takes both.
   * @throws {AuthError} at once for a failure found without waiting; else the promise rejects.
   */
  verifyNow(token: string): AuthContext | Promise<AuthContext>;
  /**
   * Whether `token` is, character for character, a token this verifier verified and holds in its
   * result cache: then it is a well-formed compact JWS. Nothing about its validity now (that is
   * {@link verifyNow}'s answer), and nothing is reported. For the HTTP layer, which need not read a
   * token it already read once through the `Authorization` grammar again.
   */
  holds(token: string): boolean;
  /**
   * Reloads `issuer`'s JWKS now (after a key compromise, say); results verified with keys no
   * longer published are dropped.
   * @throws {AuthError} `jwks_unavailable` when the download fails (the held keys are kept).
   * @throws {TypeError} when `issuer` is not registered, or is removed (`setRegistry`) before the
   * download ends. Moved to another `jwksUri` meanwhile, it is reloaded from the new one.
   */
  refresh(issuer: string): Promise<KeyLoadReport>;
  /** Stops key `kid` of `issuer` verifying at once (`key_revoked`), cached results included. */
  revokeKey(issuer: string, kid: string): void;
  /** Rejects every token of `issuer` (`issuer_suspended`) until {@link resumeIssuer}. */
  suspendIssuer(issuer: string): void;
  /** Lifts {@link suspendIssuer}. */
  resumeIssuer(issuer: string): void;
  /** Loads every issuer's keys; reports each issuer's outcome; never rejects. */
  warmUp(): Promise<KeyLoadReport[]>;
  /** The held public keys, JSON-safe, for `createVerifier({ keys })`. */
  exportKeys(): KeySnapshot;
  /**
   * Every issuer's keys as this verifier met them: first seen, first and last used, withdrawn,
   * and the key rules each broke (the `key_*` events). Frozen copies; kept in memory only.
   */
  keyHistory(): KeyHistoryEntry[];
  /**
   * The keys whose history changed here after `after` (a version this returned as `through`; 0
   * for every key changed here): what a store of the history writes at each flush, without
   * comparing the rest (what `mergeKeyHistory` takes in with `stored` is not a change). Also says
   * how long a withdrawn key is kept (`retention`), the rule a store applies too.
   * @throws {TypeError} when `after` is not a non-negative integer.
   */
  keyHistoryChanges(after: number): KeyHistoryChanges;
  /**
   * Takes in key histories kept elsewhere (other instances', or this one's before a restart, as a
   * database holds them): per key, the earliest first sighting (with what was known of its
   * publication) and first use, the latest use and expiry, and the rules it broke. Breaches taken
   * in are not reported again, here or when found here later. An expiry taken in counts only up
   * to the entry's last use (or now, if earlier) plus the longest a token of its issuer may live
   * here (its lifetime and the clock tolerance); none without a use. Each key taken in counts as
   * changed here (`keyHistoryChanges`) unless `options.stored`: the entries come from the store
   * this verifier's changes are written to, which need not have them back.
   */
  mergeKeyHistory(entries: readonly KeyHistoryEntry[], options?: MergeKeyHistoryOptions): void;
  /**
   * Replaces the trusted issuers while the verifier runs (a registry kept in a database, say).
   * An issuer added verifies its tokens at once. A changed entry applies to the next verification
   * and to those in flight; its cached results are dropped, and under a new `jwksUri` its keys too.
   * An issuer removed loses its keys and cached results, and the verifications in flight for it
   * fail (`unknown_issuer`). Suspensions and revocations outlive a removal.
   * @param registry the whole new registry (entries are checked as `new IssuerRegistry()` does,
   * with the verifier's `jwksAllowedHosts`, and may be none).
   * @returns what changed, also reported as a `registry_changed` event when something did.
   * @throws {TypeError} naming the entry and field, when an entry is bad (nothing changes then).
   */
  setRegistry(registry: IssuerRegistry | readonly IssuerEntry[]): RegistryChange;
  /**
   * Reports a refusal decided after verification (403 `insufficient_scope`: the token lacks a
   * scope the route needs) to `onEvent` as a `verify_failure`, so that the listener sees every
   * refusal. `authenticate()`, the adapters and `requireScopes(...)` call it; `undefined` when the
   * verifier has no `onEvent` (there is nothing to report to).
   */
  readonly reportRefusal: ((error: AuthError, auth: AuthContext) => void) | undefined;
  /** The trusted issuers now (see {@link setRegistry}). */
  readonly registry: IssuerRegistry;
  /** The configured audiences (`audience`, as an array), frozen. */
  readonly audiences: readonly string[];
  /** Largest token accepted, in bytes (`maxTokenBytes`). */
  readonly maxTokenBytes: number;
}

const OWNER = 'createVerifier';
const KNOWN_OPTIONS = optionNames<VerifierOptions>({
  registry: true,
  audience: true,
  now: true,
  clockTolerance: true,
  maxTokenBytes: true,
  maxTokenLifetime: true,
  algorithms: true,
  jwksMaxAge: true,
  jwksMaxAgeBounds: true,
  keyPublishLead: true,
  keyMaxAge: true,
  jwksTimeout: true,
  jwksMaxBytes: true,
  jwksMaxKeys: true,
  jwksMaxRedirects: true,
  jwksStaleWindow: true,
  jwksCooldown: true,
  jwksBackoff: true,
  jwksBackoffMax: true,
  jwksAllowedHosts: true,
  fetch: true,
  cache: true,
  cacheMaxEntries: true,
  cacheMaxBytes: true,
  cacheAdmission: true,
  keys: true,
  crypto: true,
  onEvent: true,
  trace: true,
});

/** The names of every {@link VerifierOptions} member, for code that passes options through. */
export const VERIFIER_OPTION_NAMES: ReadonlySet<string> = KNOWN_OPTIONS;

const DAY = 86_400;

/** What a bad option value was, for its message: `"RS256"`, `5`, `an empty array`. */
function found(value: unknown): string {
  return Array.isArray(value) && value.length === 0 ? 'an empty array' : describe(value);
}

function checkAudiences(value: unknown): readonly string[] {
  const rule = `${OWNER}: audience must be a non-empty string without surrounding white space, or a non-empty array of them (it cannot be skipped)`;
  // White space around an audience (a newline read from a file, say) is one no token could match.
  const isAudience = (item: unknown) => typeof item === 'string' && item !== '' && item.trim() === item;
  if (typeof value === 'string' ? !isAudience(value) : !Array.isArray(value) || value.length === 0) {
    throw new TypeError(`${rule}, got ${found(value)}`);
  }
  const list: readonly unknown[] = typeof value === 'string' ? [value] : (value as readonly unknown[]);
  const bad = list.findIndex((item) => !isAudience(item));
  if (bad !== -1) throw new TypeError(`${rule}: audience[${bad}] is ${describe(list[bad])}`);
  return Object.freeze([...(list as string[])]);
}

function checkAlgorithms(value: unknown): ReadonlySet<string> {
  if (value === undefined) return new Set(['RS256']);
  const rule = `${OWNER}: algorithms must be a non-empty array of ${RSA_ALGORITHMS.join(', ')}`;
  if (!Array.isArray(value) || value.length === 0) throw new TypeError(`${rule}, got ${found(value)}`);
  const allowed: ReadonlySet<unknown> = new Set(RSA_ALGORITHMS);
  const bad = value.findIndex((alg) => !allowed.has(alg));
  if (bad !== -1) throw new TypeError(`${rule}: algorithms[${bad}] is ${describe(value[bad])}`);
  return new Set(value as string[]);
}

/**
 * The bounds of a served max-age. The upper one defaults to `maxAge` (`jwksMaxAge`): the server
 * may shorten the cache, never lengthen it, unless `max` says otherwise. The lower one defaults to
 * the least of 60, `maxAge` and the upper one.
 */
function checkMaxAgeBounds(value: unknown, maxAge: number): MaxAgeBounds {
  const name = 'jwksMaxAgeBounds';
  const defaults = { min: Math.min(60, maxAge), max: maxAge };
  if (value === undefined) return defaults;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`${OWNER}: ${name} must be an object { min, max }, got ${describe(value)}`);
  }
  rejectUnknownOptions(`${OWNER}: ${name}`, value, MAX_AGE_BOUND_NAMES);
  const bounds = value as Record<string, unknown>;
  const max = numberOption(OWNER, `${name}.max`, bounds.max, defaults.max, { min: 0, max: DAY, unit: 'seconds' });
  // The lower bound's default never exceeds the upper one, given or not.
  const min = numberOption(OWNER, `${name}.min`, bounds.min, Math.min(defaults.min, max), { min: 0, max: DAY, unit: 'seconds' });
  if (min > max) {
    const source = bounds.max === undefined ? ` (its default, jwksMaxAge)` : '';
    throw new TypeError(`${OWNER}: ${name}.min must not exceed ${name}.max${source}, got ${min} > ${max}`);
  }
  return { min, max };
}

const MAX_AGE_BOUND_NAMES = optionNames<MaxAgeBounds>({ min: true, max: true });

/** `jwksBackoff` and `jwksBackoffMax`: the first back-off never beyond the longest. */
function checkBackoff(initial: unknown, longest: unknown): { backoffInitial: number; backoffMax: number } {
  const backoffMax = numberOption(OWNER, 'jwksBackoffMax', longest, 60, { min: 0, max: DAY, unit: 'seconds' });
  // The first back-off's default never exceeds the longest, given or not.
  const backoffInitial = numberOption(OWNER, 'jwksBackoff', initial, Math.min(1, backoffMax), { min: 0, max: DAY, unit: 'seconds' });
  if (backoffInitial > backoffMax) {
    const source = longest === undefined ? ' (its default)' : '';
    throw new TypeError(
      `${OWNER}: jwksBackoff must not exceed jwksBackoffMax${source}, got ${backoffInitial} > ${backoffMax}; raise jwksBackoffMax too`,
    );
  }
  return { backoffInitial, backoffMax };
}

function checkAdmission(value: unknown): CacheAdmission {
  if (value === undefined) return 'second-use';
  if (!CACHE_ADMISSIONS.includes(value as CacheAdmission)) {
    const names = CACHE_ADMISSIONS.map((name) => `"${name}"`).join(' or ');
    throw new TypeError(`${OWNER}: cacheAdmission must be ${names}, got ${describe(value)}`);
  }
  return value as CacheAdmission;
}

function checkEngine(value: unknown): SignatureEngine {
  if (value !== undefined && value !== 'node' && value !== 'webcrypto') {
    throw new TypeError(`${OWNER}: crypto must be "node" or "webcrypto", got ${describe(value)}`);
  }
  return createSignatureEngine(value);
}

/** Bytes of `token` in UTF-8, computed only when its length alone cannot settle the limit. */
function exceedsBytes(token: string, maxBytes: number): boolean {
  if (token.length > maxBytes) return true;
  if (token.length * 3 <= maxBytes) return false;
  return new TextEncoder().encode(token).byteLength > maxBytes;
}

function tooLarge(token: string, maxBytes: number): AuthError {
  // Its length already says enough when it is over the limit; else its bytes are counted.
  const actual =
    token.length > maxBytes ? { length: token.length } : { length: token.length, bytes: new TextEncoder().encode(token).byteLength };
  return new AuthError('token_too_large', `The token is larger than ${maxBytes} bytes.`, {
    facts: { code: 'token_too_large', rule: 'size', expected: maxBytes, actual },
  });
}

class TokenVerifier implements Verifier {
  #registry: IssuerRegistry;
  /** `jwksAllowedHosts` as given; `undefined`: those of the registry in force. */
  readonly #givenAllowedHosts: ReadonlySet<string> | undefined;
  /** Hosts exempt from the address rules now, for downloads and for registries built from entries. */
  #allowedHosts: ReadonlySet<string>;
  readonly audiences: readonly string[];
  readonly maxTokenBytes: number;
  readonly verify: (token: string) => Promise<AuthContext>;
  readonly verifyNow: (token: string) => AuthContext | Promise<AuthContext>;
  readonly holds: (token: string) => boolean;
  readonly reportRefusal: ((error: AuthError, auth: AuthContext) => void) | undefined;
  readonly #now: () => number;
  readonly #policy: ClaimPolicy;
  readonly #algorithms: ReadonlySet<string>;
  readonly #engine: SignatureEngine;
  readonly #keys: JwksCache;
  readonly #history: KeyHistory;
  /** The registered issuers' names, listed once per registry (see {@link #issuerNames}). */
  #names: { readonly registry: IssuerRegistry; readonly issuers: readonly string[] } | undefined;
  /** The retention of withdrawn keys, computed for one registry. */
  #retained: { readonly registry: IssuerRegistry; readonly seconds: number } | undefined;
  readonly #cache: ResultCache | null;
  readonly #suspended = new Set<string>();
  readonly #onEvent: VerifierEventListener | undefined;
  readonly #trace: RuleTrace | undefined;
  /** Verifications waiting for their signature to be checked. */
  #waiting = 0;

  constructor(options: VerifierOptions) {
    rejectUnknownOptions(OWNER, options, KNOWN_OPTIONS);
    const o = options as unknown as Record<string, unknown>;
    this.#givenAllowedHosts =
      o.jwksAllowedHosts === undefined ? undefined : checkAllowedHosts(OWNER, 'jwksAllowedHosts', o.jwksAllowedHosts);
    this.#registry =
      o.registry instanceof IssuerRegistry
        ? o.registry
        : new IssuerRegistry(o.registry as IssuerEntry[], { jwksAllowedHosts: [...(this.#givenAllowedHosts ?? [])] });
    this.#allowedHosts = this.#givenAllowedHosts ?? new Set(this.#registry.jwksAllowedHosts);
    const verifier = this;
    this.audiences = checkAudiences(o.audience);
    this.#now = functionOption<() => number>(OWNER, 'now', o.now) ?? (() => Date.now());
    this.maxTokenBytes = numberOption(OWNER, 'maxTokenBytes', o.maxTokenBytes, 8192, {
      min: 256,
      max: 1_048_576,
      integer: true,
      unit: 'bytes',
    });
    this.#policy = {
      audiences: new Map(this.audiences.map((audience) => [audience, audience] as const)),
      clockTolerance: numberOption(OWNER, 'clockTolerance', o.clockTolerance, 30, { min: 0, max: 600, unit: 'seconds' }),
      maxTokenLifetime: numberOption(OWNER, 'maxTokenLifetime', o.maxTokenLifetime, DAY, {
        min: 0,
        max: 7 * DAY,
        exclusiveMin: true,
        unit: 'seconds',
      }),
    };
    this.#algorithms = checkAlgorithms(o.algorithms);
    this.#engine = checkEngine(o.crypto);
    this.#onEvent = functionOption<VerifierEventListener>(OWNER, 'onEvent', o.onEvent);
    this.#trace = functionOption<RuleTrace>(OWNER, 'trace', o.trace);
    const useCache = booleanOption(OWNER, 'cache', o.cache, true) && this.#trace === undefined;
    const maxEntries = numberOption(OWNER, 'cacheMaxEntries', o.cacheMaxEntries, 10_000, {
      min: 1,
      max: 10_000_000,
      integer: true,
      unit: 'results',
    });
    const maxBytes = numberOption(OWNER, 'cacheMaxBytes', o.cacheMaxBytes, 32 * 1024 * 1024, {
      min: 1024,
      max: 2 ** 40,
      integer: true,
      unit: 'bytes',
    });
    const admission = checkAdmission(o.cacheAdmission);
    this.#cache = useCache ? new ResultCache({ maxEntries, maxBytes, admission }) : null;
    const staleWindow = numberOption(OWNER, 'jwksStaleWindow', o.jwksStaleWindow, DAY, { min: 0, max: 30 * DAY, unit: 'seconds' });
    this.#history = new KeyHistory(
      {
        publishLead: numberOption(OWNER, 'keyPublishLead', o.keyPublishLead, 3600, { min: 0, max: 7 * DAY, unit: 'seconds' }),
        maxKeyAge: numberOption(OWNER, 'keyMaxAge', o.keyMaxAge, 3 * DAY, { min: 3600, max: 366 * DAY, unit: 'seconds' }),
        now: () => this.#now(),
        longestValidity: (issuer) =>
          (this.#registry.get(issuer)?.maxTokenLifetime ?? this.#policy.maxTokenLifetime) + this.#policy.clockTolerance,
        retention: () => this.#retention(staleWindow),
      },
      this.#onEvent,
    );
    const jwksMaxAge = numberOption(OWNER, 'jwksMaxAge', o.jwksMaxAge, 600, { min: 0, max: DAY, unit: 'seconds' });
    this.#keys = new JwksCache(this.#registry.registered(), {
      maxAge: jwksMaxAge,
      maxAgeBounds: checkMaxAgeBounds(o.jwksMaxAgeBounds, jwksMaxAge),
      timeout: numberOption(OWNER, 'jwksTimeout', o.jwksTimeout, DEFAULT_JWKS_TIMEOUT, {
        min: 0,
        max: MAX_JWKS_TIMEOUT,
        exclusiveMin: true,
        unit: 'seconds',
      }),
      maxBytes: numberOption(OWNER, 'jwksMaxBytes', o.jwksMaxBytes, 262_144, {
        min: 1024,
        max: 16 * 1024 * 1024,
        integer: true,
        unit: 'bytes',
      }),
      maxKeys: numberOption(OWNER, 'jwksMaxKeys', o.jwksMaxKeys, 100, { min: 1, max: 1000, integer: true, unit: 'keys' }),
      maxRedirects: numberOption(OWNER, 'jwksMaxRedirects', o.jwksMaxRedirects, 0, { min: 0, max: 10, integer: true, unit: 'redirects' }),
      get allowedHosts() {
        return verifier.#allowedHosts;
      },
      staleWindow,
      cooldown: numberOption(OWNER, 'jwksCooldown', o.jwksCooldown, 30, { min: 0, max: DAY, unit: 'seconds' }),
      ...checkBackoff(o.jwksBackoff, o.jwksBackoffMax),
      algorithms: this.#algorithms,
      fetch: functionOption<FetchLike>(OWNER, 'fetch', o.fetch),
      now: this.#now,
      engine: this.#engine,
      onEvent: this.#onEvent,
      history: this.#history,
      onKeysRemoved: (issuer, kids) => this.#cache?.dropKeys(issuer, new Set(kids)),
    });
    if (o.keys !== undefined) this.#keys.import(checkKeySnapshot(OWNER, o.keys));
    // Every verification, `verify` and `verifyNow` alike, runs through one function (reporting its
    // failures when a listener or a trace is set): a rule or an instrument added there covers both.
    const reporting = this.#onEvent !== undefined || this.#trace !== undefined;
    const verifyNow = reporting ? (token: string) => this.#verifyReporting(token) : (token: string) => this.#verifyNow(token);
    this.verifyNow = verifyNow;
    // A property, as `verifyNow`: it may be passed on unbound (`extractBearerToken(value, verifier.holds)`).
    this.holds = (token) => this.#cache?.holds(token) === true;
    this.reportRefusal = this.#onEvent === undefined ? undefined : (error, auth) => this.#refused(error, auth);
    this.verify = (token) => {
      try {
        const result = verifyNow(token);
        return result instanceof Promise ? result : Promise.resolve(result);
      } catch (error) {
        return Promise.reject(error);
      }
    };
  }

  /**
   * {@link #verifyNow}, its outcome, at once or later, reported to the event listener, and its
   * failure to the trace.
   */
  #verifyReporting(token: string): AuthContext | Promise<AuthContext> {
    const started = performance.now();
    const met: Encounter = { kid: null, cached: false };
    try {
      const result = this.#verifyNow(token, met);
      if (!(result instanceof Promise)) return this.#succeeded(result, met, started);
      return result.then(
        (context) => this.#succeeded(context, met, started),
        (error: unknown) => {
          throw this.#reported(error, met, started);
        },
      );
    } catch (error) {
      throw this.#reported(error, met, started);
    }
  }

  /** Reports a verification that resolved to `context` to the event listener; returns `context`. */
  #succeeded(context: AuthContext, met: Encounter, started: number): AuthContext {
    if (this.#onEvent !== undefined) {
      emit(this.#onEvent, {
        type: 'verify_success',
        issuer: context.issuer,
        kid: met.kid ?? '',
        cached: met.cached,
        durationMs: elapsedMs(started),
      });
    }
    return context;
  }

  /** Reports a refusal after verification (a scope the token lacks) as verification reports its own. */
  #refused(error: AuthError, auth: AuthContext): void {
    if (this.#onEvent === undefined) return;
    emit(this.#onEvent, {
      type: 'verify_failure',
      code: error.code,
      issuer: auth.issuer,
      kid: null,
      cached: false,
      durationMs: 0,
      ...(error.facts === undefined ? {} : { facts: error.facts }),
      get hint() {
        return error.hint;
      },
    });
  }

  /** Reports `error`, when it is an `AuthError`, to the trace and the event listener; returns it. */
  #reported(error: unknown, met: Encounter, started: number): unknown {
    if (!isAuthError(error)) return error;
    if (error.facts !== undefined) this.#trace?.({ ...error.facts, passed: false });
    if (this.#onEvent !== undefined) {
      const failed = error;
      // The hint is written only if the listener reads it.
      emit(this.#onEvent, {
        type: 'verify_failure',
        code: failed.code,
        issuer: failed.issuer ?? null,
        kid: met.kid,
        cached: met.cached,
        durationMs: elapsedMs(started),
        ...(failed.claim === undefined ? {} : { claim: failed.claim }),
        ...(failed.facts === undefined ? {} : { facts: failed.facts }),
        get hint() {
          return failed.hint;
        },
      });
    }
    return error;
  }

  /**
   * The verification, in order: the size; the result cache (a hit re-checked as a fresh result
   * would be, at once while its key is held and fresh); then, awaited, {@link #verifyToken}. A
   * failing rule records what it compared (`AuthError.facts`); a trace hears of every rule.
   */
  #verifyNow(token: string, met?: Encounter): AuthContext | Promise<AuthContext> {
    if (typeof token !== 'string') {
      throw new AuthError('malformed_token', 'The token must be a string.', {
        facts: { code: 'malformed_token', rule: 'format', actual: { kind: kindOf(token) } },
      });
    }
    if (exceedsBytes(token, this.maxTokenBytes)) throw tooLarge(token, this.maxTokenBytes);
    this.#trace?.({ rule: 'size', passed: true, expected: this.maxTokenBytes, actual: { length: token.length } });
    const hit = this.#cache?.get(token);
    if (hit !== undefined) {
      if (met !== undefined) {
        met.cached = true;
        met.kid = hit.key.kid;
      }
      this.#checkNotSuspended(hit.issuer);
      const held = this.#keys.peek(hit.issuer, hit.key.kid, this.#now());
      if (held === hit.key) return this.#reuse(hit);
      // Keys past their max-age are reloaded (held keys verify meanwhile): wait for the key.
      if (held === undefined) return this.#reuseOnceResolved(hit, met);
      // A key changed vouches for nothing: the token is verified afresh.
      this.#cache?.delete(token);
      if (met !== undefined) {
        met.cached = false;
        met.kid = null;
      }
    } else if (this.#cache !== null && this.#onEvent !== undefined) emit(this.#onEvent, { type: 'cache', outcome: 'miss' });
    return this.#verifyToken(token, met);
  }

  /**
   * A cached result whose key was past its max-age: reused if the key still vouches for it and the
   * result is still cached (a change of its issuer's entry meanwhile dropped it), else verified afresh.
   */
  async #reuseOnceResolved(hit: CachedResult, met?: Encounter): Promise<AuthContext> {
    const key = await this.#keys.resolve(hit.issuer, hit.key.kid);
    if (key === hit.key && this.#cache?.get(hit.token) === hit) return this.#reuse(hit);
    this.#cache?.delete(hit.token);
    if (met !== undefined) {
      met.cached = false;
      met.kid = null;
    }
    return this.#verifyToken(hit.token, met);
  }

  /**
   * A token not in the cache: the segments decoded, the header rules, the issuer, its key, the
   * signature's length and then the signature, the trust re-checked after any wait, the claims.
   */
  async #verifyToken(token: string, met?: Encounter): Promise<AuthContext> {
    const trace = this.#trace;
    const layout = locateCompactJws(token);
    const rawHeader = decodeJoseHeader(token, layout);
    const payload = decodeJwsPayload(token, layout);
    const signature = decodeJwsSignature(token, layout);
    trace?.({ rule: 'format', passed: true });
    const header = checkJoseHeader(rawHeader, this.#algorithms, trace);
    const iss = payload.iss;
    if (typeof iss !== 'string') {
      throw invalidClaim('The token must name its issuer in "iss" (a string).', {
        rule: 'iss',
        claim: 'iss',
        expected: 'string',
        actual: iss,
      });
    }
    // The registry's own string, equal to `iss`: the token's copy need not be kept.
    const issuer = this.#registeredIssuer(iss, false).issuer;
    trace?.({ rule: 'iss', claim: 'iss', passed: true, expected: this.#issuerNames(), actual: iss });
    try {
      this.#checkNotSuspended(issuer);
      const key = this.#keys.peek(issuer, header.kid, this.#now()) ?? (await this.#keys.resolve(issuer, header.kid));
      if (met !== undefined) met.kid = key.kid;
      if (key.jwk.alg !== undefined && key.jwk.alg !== header.alg) {
        const facts = {
          code: 'unknown_key',
          rule: 'key',
          expected: { issuer, kid: key.kid, alg: key.jwk.alg },
          actual: header.alg,
        } as const;
        throw new AuthError('unknown_key', `The token's key is published for ${key.jwk.alg}, not ${header.alg}.`, {
          facts,
        });
      }
      trace?.({
        rule: 'key',
        passed: true,
        expected: { issuer, kid: key.kid, alg: key.jwk.alg, bits: key.modulusBytes * 8 },
        actual: header.kid,
      });
      if (signature.byteLength !== key.modulusBytes) throw invalidSignature(issuer, key.kid, header.alg);
      // With none other waiting for its signature, the engine may answer at once, on this thread;
      // with some, it may send this one to another thread. The engine never rejects.
      const concurrent = this.#waiting > 0;
      this.#waiting += 1;
      const valid = await this.#engine.verify(header.alg, key, token.slice(0, layout.payloadEnd), signature, concurrent);
      this.#waiting -= 1;
      if (!valid) throw invalidSignature(issuer, key.kid, header.alg);
      const registered = this.#checkStillTrusted(issuer, key);
      trace?.({ rule: 'signature', passed: true, expected: { issuer, kid: key.kid }, actual: header.alg });
      const at = this.#now();
      const checked = checkClaims(payload, registered, this.#policy, at / 1000, trace);
      this.#history.used(key, at, checked.times);
      const context = createAuthContext(issuer, checked, token, layout.headerEnd + 1, layout.payloadEnd);
      const cache = this.#cache;
      if (cache?.admits(token)) cache.set({ token, context, issuer, key, ...checked.times });
      return context;
    } catch (error) {
      throw this.#withIssuer(error, issuer);
    }
  }

  /** A cached result whose key still vouches for it: the trust re-checked, then its time claims. */
  #reuse(hit: CachedResult): AuthContext {
    try {
      this.#checkStillTrusted(hit.issuer, hit.key);
      checkTimeWindow(hit, this.#now() / 1000, this.#policy.clockTolerance);
    } catch (error) {
      this.#cache?.delete(hit.token);
      throw this.#withIssuer(error, hit.issuer);
    }
    if (this.#onEvent !== undefined) emit(this.#onEvent, { type: 'cache', outcome: 'hit' });
    return hit.context;
  }

  #checkNotSuspended(issuer: string): void {
    if (this.#suspended.has(issuer)) {
      throw new AuthError('issuer_suspended', "The token's issuer is suspended.", {
        issuer,
        facts: { code: 'issuer_suspended', rule: 'suspended', expected: issuer },
      });
    }
  }

  /** The registered entry of `iss`, else `unknown_issuer` with the registered issuers. */
  #registeredIssuer(iss: string, removed: boolean): RegisteredIssuer {
    const registered = this.#registry.get(iss);
    if (registered !== undefined) return registered;
    throw unknownIssuer(iss, this.#issuerNames(), removed);
  }

  /**
   * The registered issuers' names, for the facts of `unknown_issuer`: listed once per registry and
   * shared (frozen), so that a token naming an unregistered issuer, which anyone can send and which
   * fails before any key or signature, costs no copy of a registry of thousands of issuers.
   */
  #issuerNames(): readonly string[] {
    if (this.#names?.registry !== this.#registry) {
      this.#names = { registry: this.#registry, issuers: Object.freeze(this.#registry.issuers) };
    }
    return this.#names.issuers;
  }

  /**
   * After any wait (a key download, a signature checked elsewhere): the issuer removed,
   * `suspendIssuer()` or `revokeKey()` called meanwhile, or the key dropped meanwhile, refuses the
   * token. Returns the issuer's entry as it is now, which the claims are checked against.
   */
  #checkStillTrusted(issuer: string, key: PreparedKey): RegisteredIssuer {
    const registered = this.#registeredIssuer(issuer, true);
    this.#checkNotSuspended(issuer);
    this.#keys.confirm(issuer, key);
    return registered;
  }

  /** Tags an error with the issuer, for events; other errors pass through. */
  #withIssuer(error: unknown, issuer: string): unknown {
    return error instanceof AuthError && error.issuer === undefined ? withIssuer(error, issuer) : error;
  }

  #registered(method: string, issuer: unknown): string {
    if (typeof issuer !== 'string' || !this.#registry.has(issuer)) {
      throw new TypeError(`${method}: ${typeof issuer === 'string' ? quote(issuer) : kindOf(issuer)} is not a registered issuer`);
    }
    return issuer;
  }

  refresh(issuer: string): Promise<KeyLoadReport> {
    return this.#keys.refresh(this.#registered('refresh', issuer));
  }

  revokeKey(issuer: string, kid: string): void {
    this.#keys.revoke(this.#registered('revokeKey', issuer), kid);
  }

  suspendIssuer(issuer: string): void {
    const registered = this.#registered('suspendIssuer', issuer);
    if (this.#suspended.has(registered)) return;
    this.#suspended.add(registered);
    emit(this.#onEvent, { type: 'issuer_suspended', issuer: registered });
  }

  resumeIssuer(issuer: string): void {
    // A suspension outlives its issuer's removal, and may be lifted meanwhile.
    if (typeof issuer === 'string' && this.#suspended.delete(issuer)) {
      emit(this.#onEvent, { type: 'issuer_resumed', issuer });
      return;
    }
    this.#registered('resumeIssuer', issuer);
  }

  warmUp(): Promise<KeyLoadReport[]> {
    return this.#keys.warmUp();
  }

  exportKeys(): KeySnapshot {
    return this.#keys.export();
  }

  keyHistory(): KeyHistoryEntry[] {
    return this.#history.snapshot();
  }

  keyHistoryChanges(after: number): KeyHistoryChanges {
    if (!Number.isSafeInteger(after) || after < 0) {
      throw new TypeError(
        `keyHistoryChanges: after must be a non-negative integer (a version it returned as through, or 0 for every key), got ${describe(after)}`,
      );
    }
    return this.#history.changes(after);
  }

  mergeKeyHistory(entries: readonly KeyHistoryEntry[], options: MergeKeyHistoryOptions = {}): void {
    if (typeof options !== 'object' || options === null) {
      throw new TypeError(`mergeKeyHistory: options must be an object, got ${describe(options)}`);
    }
    const stored = booleanOption('mergeKeyHistory', 'stored', options.stored, false);
    this.#history.merge(checkKeyHistory('mergeKeyHistory', entries), stored);
  }

  /** Seconds a withdrawn key is kept: the longest a token may live here, plus the JWKS stale window (see `KeyHistoryChanges`). */
  #retention(staleWindow: number): number {
    if (this.#retained?.registry !== this.#registry) {
      let longest = this.#policy.maxTokenLifetime;
      for (const registered of this.#registry.registered()) longest = Math.max(longest, registered.maxTokenLifetime ?? 0);
      this.#retained = { registry: this.#registry, seconds: longest + this.#policy.clockTolerance + staleWindow };
    }
    return this.#retained.seconds;
  }

  get registry(): IssuerRegistry {
    return this.#registry;
  }

  setRegistry(registry: IssuerRegistry | readonly IssuerEntry[]): RegistryChange {
    const next =
      registry instanceof IssuerRegistry
        ? registry
        : new IssuerRegistry(registry, { allowEmpty: true, jwksAllowedHosts: [...this.#allowedHosts] });
    const change = this.#registry.changesTo(next);
    this.#registry = next;
    this.#allowedHosts = this.#givenAllowedHosts ?? new Set(next.jwksAllowedHosts);
    for (const issuer of change.added) this.#keys.add(next.get(issuer) as RegisteredIssuer);
    for (const issuer of change.updated) {
      this.#keys.update(next.get(issuer) as RegisteredIssuer);
      this.#cache?.dropIssuer(issuer);
    }
    for (const issuer of change.removed) {
      this.#keys.remove(issuer);
      this.#cache?.dropIssuer(issuer);
      this.#history.removed(issuer, this.#now());
    }
    if (change.added.length + change.updated.length + change.removed.length > 0) {
      emit(this.#onEvent, { type: 'registry_changed', ...change, issuers: next.size });
    }
    return change;
  }
}

/** Options of `Verifier.mergeKeyHistory`. */
export interface MergeKeyHistoryOptions {
  /**
   * The entries come from the store this verifier's changes are written to (`postgresKeyHistory`
   * passes `true`): they do not count as changed here, so the store is not written them back.
   * @default false
   */
  readonly stored?: boolean | undefined;
}

/**
 * Builds a verifier. Every option is checked here; a bad one throws a `TypeError` naming it.
 *
 * @example
 * ```ts
 * const verifier = createVerifier({ registry, audience: 'https://payments.example' });
 * const auth = await verifier.verify(token);
 * ```
 */
export function createVerifier(options: VerifierOptions): Verifier {
  return new TokenVerifier(options);
}
