/**
 * The keys of every registered issuer: loaded from the issuer's JWKS only, kept for
 * a max-age, refetched once on an unknown `kid` (at most once per cooldown), shared by concurrent
 * callers (one download in flight per issuer), served stale for a bounded time when a refresh
 * fails, with a back-off between failed downloads. Every time decision reads the verifier's clock.
 *
 * The stale window counts from the moment keys go stale (their download plus the max-age): no key
 * verifies more than `maxAge + staleWindow` after the download that last listed it, however long
 * the verifier was idle and however old an imported snapshot is.
 */
import { AuthError, unknownIssuer } from './errors.js';
import { emit, type JwksFetchTrigger, type KeysRemovedEvent, type VerifierEventListener } from './events.js';
import { type FetchLike, type JwksFailureReason, JwksFetchError, fetchJwks } from './jwks-fetch.js';
import { type IgnoredKey, type KeySelection, type RsaPublicJwk, noteIgnored, selectUsableKeys } from './jwk.js';
import type { KeyHistory } from './key-history.js';
import { quote } from './hint-text.js';
import { describe } from './options.js';
import type { RegisteredIssuer } from './registry.js';
import type { PreparedKey, SignatureEngine } from './signature.js';

/** The settings of a {@link JwksCache}; times in seconds, the clock in milliseconds. */
export interface JwksCacheSettings {
  /** Used when the JWKS response has no usable `Cache-Control` max-age. */
  readonly maxAge: number;
  /** The range a `Cache-Control` max-age is clamped to. */
  readonly maxAgeBounds: MaxAgeBounds;
  readonly timeout: number;
  readonly maxBytes: number;
  /** Most entries a JWKS `keys` array (or a snapshot's `keys`) may hold. */
  readonly maxKeys: number;
  readonly maxRedirects: number;
  /** Hosts exempt from the address rules (`jwksAllowedHosts`). */
  readonly allowedHosts: ReadonlySet<string>;
  readonly staleWindow: number;
  readonly cooldown: number;
  readonly backoffInitial: number;
  readonly backoffMax: number;
  readonly algorithms: ReadonlySet<string>;
  readonly fetch: FetchLike | undefined;
  readonly now: () => number;
  readonly engine: SignatureEngine;
  readonly onEvent: VerifierEventListener | undefined;
  /** Hears of every key set installed, for the key rules. */
  readonly history: KeyHistory;
  /** Called when keys stop verifying, so results verified with them can be dropped. */
  readonly onKeysRemoved: (issuer: string, kids: readonly string[]) => void;
}

/** Seconds; `min` ≤ `max`. */
export interface MaxAgeBounds {
  readonly min: number;
  readonly max: number;
}

/** One issuer's keys as exported by {@link JwksCache.export}. */
export interface IssuerKeySnapshot {
  readonly issuer: string;
  readonly jwksUri: string;
  /** When the keys were downloaded, in milliseconds since the epoch (the verifier's clock). */
  readonly fetchedAt: number;
  readonly keys: readonly RsaPublicJwk[];
  /** Kids revoked with `revokeKey()`, kept revoked by a verifier built from the snapshot. */
  readonly revoked?: readonly string[];
}

/** A JSON-safe copy of the key cache, for `createVerifier({ keys })`. Public keys only. */
export interface KeySnapshot {
  readonly version: 1;
  readonly issuers: readonly IssuerKeySnapshot[];
}

/** One issuer's outcome in a `refresh()` or `warmUp()`. */
export interface KeyLoadReport {
  readonly issuer: string;
  readonly ok: boolean;
  /** Usable keys after the load. */
  readonly keys?: number;
  /** Why it failed (no key material, no token). */
  readonly error?: string;
}

interface IssuerState {
  /** The issuer's entry; replaced in place when it changes with the same `jwksUri`. */
  registered: RegisteredIssuer;
  keys: ReadonlyMap<string, PreparedKey> | null;
  fetchedAt: number;
  freshUntil: number;
  /** Set after a failed download while keys are held; cleared by the next good one. */
  failingSince: number | null;
  /** The held keys verify until this moment (fresh, then stale while they cannot be reloaded). */
  staleUntil: number;
  /** Why the last download failed (no URL, token or key material), for reports. */
  lastFailure: string | null;
  /** Its reason (`address`, `timeout`…; `key_import`), for hints. */
  lastReason: JwksFailureReason | 'key_import' | null;
  /** The entries of the installed set's download that were ignored, each with the key rule it broke (for `unknown_key`). */
  ignored: readonly IgnoredKey[];
  inflight: Promise<boolean> | null;
  lastKidMissAt: number;
  retryAt: number;
  failures: number;
  /** The issuer's revoked kids: one set per `iss`, kept through changes and removals of its entry. */
  readonly revoked: Set<string>;
}

/** Milliseconds since `startedAt` (a `performance.now()` reading), to the hundredth: the durations events report. */
export function elapsedMs(startedAt: number): number {
  return Math.round((performance.now() - startedAt) * 100) / 100;
}

/** The entries of `selection` that were ignored, those the runtime could not import (absent from `keys`) included. */
function ignoredEntries(selection: KeySelection, keys: ReadonlyMap<string, PreparedKey>): readonly IgnoredKey[] {
  const ignored: IgnoredKey[] = [...selection.reasons];
  for (const [kid, jwk] of selection.keys) if (!keys.has(kid)) noteIgnored(ignored, jwk, 'the runtime cannot import it');
  return ignored;
}

/** The key cache of one verifier. */
export class JwksCache {
  readonly #settings: JwksCacheSettings;
  readonly #states = new Map<string, IssuerState>();
  /** Each issuer's revoked kids, by `iss`, outliving its entry's changes and removal. */
  readonly #revoked = new Map<string, Set<string>>();

  constructor(issuers: Iterable<RegisteredIssuer>, settings: JwksCacheSettings) {
    this.#settings = settings;
    for (const registered of issuers) this.add(registered);
  }

  /** Starts holding keys for `registered`, a newly registered issuer: none until first needed. */
  add(registered: RegisteredIssuer): void {
    this.#states.set(registered.issuer, {
      registered,
      keys: null,
      fetchedAt: 0,
      freshUntil: 0,
      failingSince: null,
      staleUntil: 0,
      lastFailure: null,
      lastReason: null,
      ignored: [],
      inflight: null,
      lastKidMissAt: Number.NEGATIVE_INFINITY,
      retryAt: Number.NEGATIVE_INFINITY,
      failures: 0,
      revoked: this.#revokedOf(registered.issuer),
    });
  }

  /**
   * `registered` replaces its issuer's entry. Under the same `jwksUri` the held keys stay; under
   * another they stop verifying at once (`issuer_changed`), and a download in flight from the old
   * one installs nothing.
   */
  update(registered: RegisteredIssuer): void {
    const state = this.#state(registered.issuer);
    if (state.registered.jwksUri === registered.jwksUri) {
      state.registered = registered;
      return;
    }
    this.add(registered);
    this.#drop(state, 'issuer_changed');
  }

  #revokedOf(issuer: string): Set<string> {
    let revoked = this.#revoked.get(issuer);
    if (revoked === undefined) {
      revoked = new Set();
      this.#revoked.set(issuer, revoked);
    }
    return revoked;
  }

  /** Forgets `issuer`, no longer registered: its keys stop verifying at once (`issuer_removed`). */
  remove(issuer: string): void {
    const state = this.#state(issuer);
    this.#states.delete(issuer);
    this.#drop(state, 'issuer_removed');
  }

  #state(issuer: string): IssuerState {
    const state = this.#states.get(issuer);
    if (state === undefined) throw new TypeError(`${JSON.stringify(issuer)} is not a registered issuer`);
    return state;
  }

  /**
   * The keys that may verify now: fresh ones, or stale ones (past their max-age, while a reload
   * runs or keeps failing) until the stale window closes.
   */
  #usable(state: IssuerState, now: number): ReadonlyMap<string, PreparedKey> | null {
    if (state.keys === null) return null;
    if (now < state.staleUntil) return state.keys;
    // The stale window is over: these keys are no longer trusted at all.
    this.#drop(state, 'expired');
    return null;
  }

  #drop(state: IssuerState, cause: KeysRemovedEvent['cause']): void {
    const kids = state.keys === null ? [] : [...state.keys.keys()];
    state.keys = null;
    this.#removed(state, kids, cause);
  }

  #removed(state: IssuerState, kids: readonly string[], cause: KeysRemovedEvent['cause']): void {
    if (kids.length === 0) return;
    emit(this.#settings.onEvent, { type: 'keys_removed', issuer: state.registered.issuer, kids, cause });
    this.#settings.onKeysRemoved(state.registered.issuer, kids);
  }

  #retryAfter(state: IssuerState, now: number): number {
    return Math.max(1, Math.ceil((state.retryAt - now) / 1000));
  }

  #unavailable(state: IssuerState, now: number, cause?: unknown): AuthError {
    const { issuer, jwksUri } = state.registered;
    return new AuthError('jwks_unavailable', "The issuer's signing keys cannot be loaded right now.", {
      retryAfter: this.#retryAfter(state, now),
      issuer,
      cause,
      facts: { code: 'jwks_unavailable', rule: 'key', expected: { issuer, jwksUri, failure: state.lastFailure, reason: state.lastReason } },
    });
  }

  /**
   * `unknown_key` for `kid`, with the kids held, when they were loaded (`fetchedAt` 0: never), and
   * why the download's entries under `kid`, if any, were ignored.
   */
  #unknownKey(state: IssuerState, kid: string, now: number, message: string): AuthError {
    const issuer = state.registered.issuer;
    const ignored = state.ignored.filter((entry) => entry.kid === kid);
    const expected = { issuer, kids: [...(state.keys?.keys() ?? [])], fetchedAt: state.fetchedAt, now, ignored };
    return new AuthError('unknown_key', message, { issuer, facts: { code: 'unknown_key', rule: 'key', expected, actual: kid } });
  }

  /** Shares one download per issuer among every caller. Resolves `true` when it succeeded; never rejects. */
  #load(state: IssuerState, trigger: JwksFetchTrigger): Promise<boolean> {
    return state.inflight ?? this.#track(state, this.#download(state, trigger));
  }

  /** Makes `work` the issuer's one operation in flight until it settles. */
  #track(state: IssuerState, work: Promise<boolean>): Promise<boolean> {
    const inflight: Promise<boolean> = work.finally(() => {
      if (state.inflight === inflight) state.inflight = null;
    });
    state.inflight = inflight;
    return inflight;
  }

  async #prepare(state: IssuerState, jwks: ReadonlyMap<string, RsaPublicJwk>): Promise<Map<string, PreparedKey>> {
    const prepared = new Map<string, PreparedKey>();
    for (const [kid, jwk] of jwks) {
      const held = state.keys?.get(kid);
      if (held !== undefined && held.jwk.n === jwk.n && held.jwk.e === jwk.e && held.jwk.alg === jwk.alg) {
        prepared.set(kid, held);
        continue;
      }
      try {
        prepared.set(kid, await this.#settings.engine.prepare(jwk));
      } catch {
        // A key the runtime cannot import is as good as absent.
      }
    }
    return prepared;
  }

  /**
   * The seconds a download stays fresh: the server's `Cache-Control` max-age within the bounds,
   * or the verifier's own max-age when the server sent none usable.
   */
  #maxAge(served: number | undefined): number {
    const { maxAge, maxAgeBounds } = this.#settings;
    return served === undefined ? maxAge : Math.min(maxAgeBounds.max, Math.max(maxAgeBounds.min, served));
  }

  /**
   * Replaces the issuer's keys, fresh for `maxAge` seconds; keys no longer present (or changed)
   * stop verifying at once.
   */
  #install(state: IssuerState, keys: Map<string, PreparedKey>, ignored: readonly IgnoredKey[], fetchedAt: number, maxAge: number): void {
    // A download from an entry since removed, or since moved to another `jwksUri`, installs nothing.
    if (this.#states.get(state.registered.issuer) !== state) return;
    const removed = state.keys === null ? [] : [...state.keys].filter(([kid, key]) => keys.get(kid) !== key).map(([kid]) => kid);
    this.#settings.history.listed(state.registered.issuer, keys, fetchedAt, state.fetchedAt);
    state.keys = keys;
    state.ignored = ignored;
    state.fetchedAt = fetchedAt;
    state.freshUntil = fetchedAt + maxAge * 1000;
    state.staleUntil = state.freshUntil + this.#settings.staleWindow * 1000;
    state.failingSince = null;
    state.lastFailure = null;
    state.lastReason = null;
    state.failures = 0;
    state.retryAt = Number.NEGATIVE_INFINITY;
    this.#removed(state, removed, 'jwks');
  }

  #fail(state: IssuerState, error: unknown): void {
    const { backoffInitial, backoffMax, now } = this.#settings;
    const at = now();
    state.failures += 1;
    let delay = Math.min(backoffMax, backoffInitial * 2 ** (state.failures - 1));
    if (error instanceof JwksFetchError && error.retryAfter !== undefined) delay = Math.max(delay, error.retryAfter);
    state.retryAt = at + delay * 1000;
    state.lastFailure = error instanceof JwksFetchError ? error.message : 'The JWKS keys could not be imported.';
    state.lastReason = error instanceof JwksFetchError ? error.reason : 'key_import';
    if (state.keys !== null && state.failingSince === null) state.failingSince = at;
  }

  async #download(state: IssuerState, trigger: JwksFetchTrigger): Promise<boolean> {
    const { registered } = state;
    const settings = this.#settings;
    const startedAt = performance.now();
    try {
      const document = await fetchJwks(registered.jwksUri, settings.fetch, settings, settings.now());
      const selection = selectUsableKeys(document.keys, settings.algorithms);
      const keys = await this.#prepare(state, selection.keys);
      const ignored = ignoredEntries(selection, keys);
      this.#install(state, keys, ignored, settings.now(), this.#maxAge(document.maxAge));
      emit(settings.onEvent, {
        type: 'jwks_fetch',
        issuer: registered.issuer,
        trigger,
        outcome: 'ok',
        durationMs: elapsedMs(startedAt),
        keys: keys.size,
        ignoredKeys: selection.ignored + selection.keys.size - keys.size,
        ...(ignored.length === 0 ? {} : { ignored }),
      });
      return true;
    } catch (error) {
      this.#fail(state, error);
      emit(settings.onEvent, {
        type: 'jwks_fetch',
        issuer: registered.issuer,
        trigger,
        outcome: 'error',
        durationMs: elapsedMs(startedAt),
        reason: error instanceof JwksFetchError ? error.reason : 'key_import',
        ...(error instanceof JwksFetchError && error.status !== undefined ? { status: error.status } : {}),
        ...(error instanceof JwksFetchError && error.address !== undefined ? { address: error.address } : {}),
      });
      return false;
    }
  }

  /**
   * The key `kid` of `issuer` when it is held, fresh and not revoked, without waiting: the hot path.
   * `undefined` means "ask {@link resolve}", not "unknown".
   * @param at the clock's reading (ms), when the caller has just taken it
   */
  peek(issuer: string, kid: string, at: number = this.#settings.now()): PreparedKey | undefined {
    const state = this.#states.get(issuer);
    if (state === undefined || state.keys === null || state.revoked.has(kid)) return undefined;
    return at < state.freshUntil ? state.keys.get(kid) : undefined;
  }

  /**
   * The key `kid` of `issuer`, loading or refetching the JWKS as the rules allow. Keys past their
   * max-age keep verifying while a reload runs in the background; an unknown `kid` waits for a
   * download (one per cooldown).
   * @throws {AuthError} `key_revoked`, `unknown_key` or `jwks_unavailable`.
   */
  async resolve(issuer: string, kid: string): Promise<PreparedKey> {
    const state = this.#state(issuer);
    const { now, cooldown } = this.#settings;
    if (state.revoked.has(kid)) throw this.#revokedError(issuer, kid);
    const at = now();
    const held = this.#usable(state, at);
    const mayFetch = state.inflight !== null || at >= state.retryAt;
    if (held === null) {
      if (mayFetch) await this.#load(state, state.keys === null && state.fetchedAt === 0 ? 'initial' : 'max_age');
      return this.#pickAfterWait(state, kid);
    }
    if (at >= state.freshUntil && mayFetch) void this.#load(state, 'max_age');
    const key = held.get(kid);
    if (key !== undefined) return key;
    if (state.inflight !== null) {
      await state.inflight;
      return this.#pickAfterWait(state, kid);
    }
    if (at - state.lastKidMissAt >= cooldown * 1000 && at >= state.retryAt) {
      state.lastKidMissAt = at;
      await this.#load(state, 'kid_miss');
      return this.#pickAfterWait(state, kid);
    }
    return this.#pick(state, kid, at);
  }

  /**
   * {@link #pick} after a wait, during which the issuer may have been removed (`unknown_issuer`)
   * or moved to another `jwksUri` (then its keys are resolved afresh).
   */
  #pickAfterWait(state: IssuerState, kid: string): Promise<PreparedKey> | PreparedKey {
    const issuer = state.registered.issuer;
    const current = this.#states.get(issuer);
    if (current === undefined) throw unknownIssuer(issuer, [...this.#states.keys()], true);
    if (current !== state) return this.resolve(issuer, kid);
    return this.#pick(state, kid, this.#settings.now());
  }

  #revokedError(issuer: string, kid: string): AuthError {
    return new AuthError('key_revoked', 'The key that signed the token has been revoked.', {
      issuer,
      facts: { code: 'key_revoked', rule: 'key', expected: { issuer, revoked: true }, actual: kid },
    });
  }

  /** Picks `kid` from the keys usable now, after any load this call waited for. */
  #pick(state: IssuerState, kid: string, now: number): PreparedKey {
    if (state.revoked.has(kid)) throw this.#revokedError(state.registered.issuer, kid);
    const keys = this.#usable(state, now);
    if (keys === null) throw this.#unavailable(state, now);
    const key = keys.get(kid);
    if (key !== undefined) return key;
    if (state.failingSince !== null) throw this.#unavailable(state, now);
    throw this.#unknownKey(state, kid, now, "The token's key is not in its issuer's JWKS.");
  }

  /**
   * Whether `key`, looked up for a verification that has just completed, still vouches for it: a
   * key revoked or no longer held meanwhile (a reload dropped it, or its stale window closed) does
   * not, so nothing verified with it is accepted after the change.
   * @throws {AuthError} `key_revoked`, `unknown_key` or `jwks_unavailable`.
   */
  confirm(issuer: string, key: PreparedKey): void {
    const state = this.#state(issuer);
    if (state.revoked.has(key.kid)) throw this.#revokedError(issuer, key.kid);
    // No keys after some were loaded: they expired. None ever (the entry's `jwksUri` changed): the key left.
    if (state.keys === null && state.fetchedAt !== 0) throw this.#unavailable(state, this.#settings.now());
    if (state.keys?.get(key.kid) !== key) {
      throw this.#unknownKey(state, key.kid, this.#settings.now(), "The token's key is no longer in its issuer's JWKS.");
    }
  }

  /**
   * Downloads `issuer`'s JWKS now, whatever the max-age, cooldown or back-off (after any download
   * already in flight, which may predate the change being acted on).
   * @throws {AuthError} `jwks_unavailable` when the download fails (the held keys are kept).
   */
  async refresh(issuer: string): Promise<KeyLoadReport> {
    const state = this.#state(issuer);
    if (state.inflight !== null) await state.inflight;
    const ok = await this.#load(state, 'refresh');
    // The entry changed meanwhile: a download from a `jwksUri` since left installed nothing.
    const current = this.#states.get(issuer);
    if (current === undefined) {
      throw new TypeError(
        `refresh: ${quote(issuer)} was removed from the registry while its keys were reloaded: nothing was refreshed; register it again (setRegistry) to load its keys`,
      );
    }
    if (current !== state) return this.refresh(issuer);
    if (!ok) throw this.#unavailable(state, this.#settings.now());
    return { issuer, ok, keys: state.keys?.size ?? 0 };
  }

  /** Stops `kid` of `issuer` verifying at once, even if its JWKS still lists it. */
  revoke(issuer: string, kid: string): void {
    const state = this.#state(issuer);
    if (typeof kid !== 'string' || kid === '') {
      throw new TypeError(`revokeKey: kid must be a non-empty string (a key's kid in the JWKS), got ${describe(kid)}`);
    }
    state.revoked.add(kid);
    this.#removed(state, [kid], 'revoked');
  }

  /** Loads every issuer whose keys are not fresh; reports each one; never rejects. */
  async warmUp(): Promise<KeyLoadReport[]> {
    const now = this.#settings.now();
    return Promise.all([...this.#states.values()].map((state) => this.#warm(state, now)));
  }

  /** One issuer's part of {@link warmUp}: its entry as it is once the load ends (moved meanwhile: loaded afresh). */
  async #warm(state: IssuerState, now: number): Promise<KeyLoadReport> {
    const issuer = state.registered.issuer;
    const ok = state.inflight === null && state.keys !== null && now < state.freshUntil ? true : await this.#load(state, 'warm_up');
    const current = this.#states.get(issuer);
    if (current === undefined) return { issuer, ok: false, error: 'The issuer was removed from the registry while its keys were loaded.' };
    if (current !== state) return this.#warm(current, now);
    if (ok) return { issuer, ok, keys: state.keys?.size ?? 0 };
    return { issuer, ok, error: state.lastFailure ?? "The issuer's JWKS could not be loaded." };
  }

  /**
   * The held keys of every issuer, JSON-safe: public members only; revoked keys left out and their
   * kids listed in `revoked` (a restart from the snapshot must not undo a revocation); keys past
   * the stale window left out.
   */
  export(): KeySnapshot {
    const now = this.#settings.now();
    const issuers: IssuerKeySnapshot[] = [];
    for (const state of this.#states.values()) {
      const held = state.keys !== null && now < state.staleUntil ? [...state.keys.values()] : [];
      if (held.length === 0 && state.revoked.size === 0) continue;
      issuers.push({
        issuer: state.registered.issuer,
        jwksUri: state.registered.jwksUri,
        fetchedAt: held.length === 0 ? 0 : state.fetchedAt,
        keys: held.filter((key) => !state.revoked.has(key.kid)).map((key) => ({ ...key.jwk })),
        ...(state.revoked.size === 0 ? {} : { revoked: [...state.revoked] }),
      });
    }
    return { version: 1, issuers };
  }

  /**
   * Installs keys from a snapshot, as if downloaded at its `fetchedAt` (a time in the future counts
   * as now), and its revocations. Issuers no longer registered are skipped; keys of an issuer now
   * registered with another `jwksUri`, or past the stale window, or more than `maxKeys`, too. The
   * keys go through the rules of a download. The import runs in the background; verifications
   * wait for it.
   */
  import(snapshot: KeySnapshot): void {
    const { now, maxAge, staleWindow } = this.#settings;
    const at = now();
    for (const entry of snapshot.issuers) {
      const state = this.#states.get(entry.issuer);
      if (state === undefined) continue;
      for (const kid of entry.revoked ?? []) state.revoked.add(kid);
      if (state.registered.jwksUri !== entry.jwksUri) continue;
      const fetchedAt = Math.min(entry.fetchedAt, at);
      if (fetchedAt + (maxAge + staleWindow) * 1000 <= at) continue;
      void this.#track(state, this.#importKeys(state, entry.keys, fetchedAt));
    }
  }

  async #importKeys(state: IssuerState, entries: readonly unknown[], fetchedAt: number): Promise<boolean> {
    // More keys than a download may list: none imported (as a download listing them installs
    // none); the first verification downloads the issuer's keys.
    if (entries.length > this.#settings.maxKeys) return false;
    try {
      const selection = selectUsableKeys(entries, this.#settings.algorithms);
      const keys = await this.#prepare(state, selection.keys);
      if (state.keys === null) this.#install(state, keys, ignoredEntries(selection, keys), fetchedAt, this.#settings.maxAge);
      return true;
    } catch {
      return false;
    }
  }
}
