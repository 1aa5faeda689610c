/**
 * Each issuer's keys as this verifier met them, and the key rules they break: rotate about every
 * 48 h, sign with a new key only an hour or more after publishing it, withdraw a key only once
 * the tokens it signed have expired (a compromised key is the exception, and its operators must
 * hear of it). All times are the verifier's own: when a `kid` first appeared in the issuer's JWKS
 * as downloaded here, when it first and last verified a token. Each breach is reported once per
 * `kid`, as an event.
 */
import type { TokenTimes } from './claims.js';
import { emit, type KeyBreach, type VerifierEventListener } from './events.js';
import { MAX_KID_LENGTH } from './jose-header.js';
import { loadNodeCrypto } from './node-crypto.js';
import { FIRST_SEEN, FIRST_USED, IssuerKeys, LAST_USED, LATEST_EXPIRY, PUBLISHED_AFTER, WITHDRAWN } from './issuer-keys.js';
import { describe as describeValue } from './options.js';
import type { PreparedKey } from './signature.js';

/** One key of one issuer, as {@link KeyHistory.snapshot} reports it. */
export interface KeyHistoryEntry {
  readonly issuer: string;
  readonly kid: string;
  /**
   * The key's RFC 7638 SHA-256 thumbprint (base64url), which tells a new key under an old `kid`
   * from the one before: a download listing other key material under the kid starts a new
   * history for it (first seen then), the old key withdrawn. `null` (or absent, in an entry from
   * an older version) when not known: on a runtime without `node:crypto`, a key's kid alone
   * names it.
   */
  readonly thumbprint?: string | null | undefined;
  /** When a download first listed the key, in milliseconds since the epoch (the verifier's clock). */
  readonly firstSeen: number;
  /**
   * The issuer's last good download before `firstSeen`, which did not list the key: it was
   * published after this (ms). `null` when the issuer's first download here listed it, so its
   * publication time is unknown.
   */
  readonly publishedAfter: number | null;
  /** When it first verified a token (ms); `null` if never. Result-cache hits do not count. */
  readonly firstUsed: number | null;
  /** When it last verified a token (ms); `null` if never. */
  readonly lastUsed: number | null;
  /** The latest expiry of the tokens it verified, in seconds since the epoch; `null` if none. */
  readonly latestExpiry: number | null;
  /** When a download first no longer listed it (ms); `null` while it is listed. */
  readonly withdrawn: number | null;
  /** The rules it broke, in the order found. */
  readonly breaches: readonly KeyBreach[];
}

/** What changed in a key history after a version: see `Verifier.keyHistoryChanges`. */
export interface KeyHistoryChanges {
  /** The keys whose history changed here after the version asked for (frozen copies), in no set order. */
  readonly entries: KeyHistoryEntry[];
  /** The version of the history now: ask for the changes after it next time. */
  readonly through: number;
  /**
   * Seconds a withdrawn key is kept, from its withdrawal: the longest a token may live here (the
   * longest `maxTokenLifetime`, the verifier's or an issuer's, plus `clockTolerance`) plus
   * `jwksStaleWindow`. A store of the history deletes it after that too.
   */
  readonly retention: number;
  /**
   * Now less `retention`, in milliseconds since the epoch (the verifier's clock): a key withdrawn
   * before it is forgotten here, and deleted by a store.
   */
  readonly withdrawnBefore: number;
}

/** The limits of the key rules, in seconds. */
export interface KeyRules {
  /** A key verifying a token less than this after its publication is `key_used_early`. */
  readonly publishLead: number;
  /** A key signing a token (by its `iat`) more than this after it was first seen is `key_rotation_overdue`. */
  readonly maxKeyAge: number;
  /**
   * The verifier's clock (ms) and the longest an `issuer`'s token it accepts can stay valid after
   * it was verified (seconds: its longest lifetime and the clock tolerance): the bounds of an
   * expiry taken in from elsewhere.
   */
  readonly now: () => number;
  readonly longestValidity: (issuer: string) => number;
  /** Seconds a withdrawn key is kept (see {@link KeyHistoryChanges.retention}). */
  readonly retention: () => number;
}

/**
 * A prepared key's place in the history: its issuer's keys and its kid (and the slot it had then,
 * checked before use), and its thumbprint (computed once per prepared key).
 */
interface KeyPlace {
  readonly keys: IssuerKeys;
  readonly kid: string;
  readonly slot: number;
  readonly thumbprint: string | null;
}

/**
 * The RFC 7638 SHA-256 thumbprint of `key` in base64url, by Node's hash (at once, as a download
 * is installed); `null` on a runtime without `node:crypto`.
 */
export function keyThumbprint(key: PreparedKey): string | null {
  const nodeCrypto = loadNodeCrypto();
  if (nodeCrypto === undefined) return null;
  const members = `{"e":${JSON.stringify(key.jwk.e)},"kty":"RSA","n":${JSON.stringify(key.jwk.n)}}`;
  return nodeCrypto.createHash('sha256').update(members).digest('base64url');
}

/** A thumbprint as {@link keyThumbprint} gives it: 43 base64url characters. */
const THUMBPRINT = /^[A-Za-z0-9_-]{43}$/;

/** Withdrawn keys remembered per issuer, the latest withdrawn; older ones are forgotten (a JWKS may list many kids). */
export const WITHDRAWN_KEPT = 32;

/**
 * New kids recorded per download at most: a JWKS listing more new ones at once (a host minting
 * kids to grow the history) has the others recorded by later downloads, while it still lists
 * them. They verify all the same; only their history waits.
 */
export const NEW_KIDS_RECORDED = 16;

/** Keys remembered per issuer at most, withdrawn ones included: others taken in are left out. */
export const KEYS_KEPT = 256;

/**
 * The key history of one verifier: each issuer's keys held as columns ({@link IssuerKeys}), so
 * that a history of 100,000 keys is a few objects per issuer for the garbage collector to trace,
 * not several per key.
 */
export class KeyHistory {
  readonly #rules: KeyRules;
  readonly #onEvent: VerifierEventListener | undefined;
  readonly #issuers = new Map<string, IssuerKeys>();
  /** Each prepared key's place, so that a verification costs a lookup or two. */
  readonly #byKey = new WeakMap<PreparedKey, KeyPlace>();
  /**
   * The keys changed here since the changes were last asked for, as slots by issuer, with removed
   * issuers' keys until handed out: so asking costs what changed, not the history.
   */
  readonly #log = new Map<IssuerKeys, Set<number>>();
  /** The version the changes were last asked after; the log holds every change past it. */
  #logged = 0;
  /** Whether the changes were ever asked for: until then, removed issuers' keys are not kept. */
  #followed = false;
  /** Bumped at each change made here (a download, a use, a breach, a withdrawal). */
  #version = 0;

  constructor(rules: KeyRules, onEvent: VerifierEventListener | undefined) {
    this.#rules = rules;
    this.#onEvent = onEvent;
  }

  /**
   * A download of `issuer`'s JWKS at `at` (ms) listed `keys`; `previous` is the issuer's last good
   * download before it (ms), 0 for none. Keys it no longer lists are withdrawn, a breach when a
   * token they verified is still valid.
   */
  listed(issuer: string, keys: ReadonlyMap<string, PreparedKey>, at: number, previous: number): void {
    const held = this.#keysOf(issuer);
    let added = 0;
    for (const [kid, key] of keys) {
      const place = this.#byKey.get(key);
      const thumbprint = place === undefined ? keyThumbprint(key) : place.thumbprint;
      let slot = held.slot(kid);
      if (slot !== undefined) {
        const before = held.thumbprint(slot);
        if (before === null && thumbprint !== null) {
          held.setThumbprint(slot, thumbprint);
          this.#changed(held, slot);
        } else if (before !== null && thumbprint !== null && before !== thumbprint) {
          slot = this.#replaced(held, slot, at, previous, thumbprint);
        }
      }
      if (slot === undefined) {
        if (added >= NEW_KIDS_RECORDED || held.size >= KEYS_KEPT) continue;
        added += 1;
        slot = held.add(kid, at, previous === 0 ? null : previous, thumbprint);
        this.#changed(held, slot);
      }
      if (held.time(slot, WITHDRAWN) !== null) {
        held.setTime(slot, WITHDRAWN, null);
        this.#changed(held, slot);
      }
      if (place?.keys !== held || place.kid !== kid || place.slot !== slot) this.#byKey.set(key, { keys: held, kid, slot, thumbprint });
    }
    for (const slot of held.slots()) {
      if (keys.has(held.kid(slot) as string) || held.time(slot, WITHDRAWN) !== null) continue;
      held.setTime(slot, WITHDRAWN, at);
      this.#changed(held, slot);
      const expiry = held.time(slot, LATEST_EXPIRY);
      if (expiry !== null && expiry * 1000 > at) this.#breach(held, slot, 'key_withdrawn');
    }
    this.#trim(held);
  }

  /**
   * A download at `at` lists other key material (`thumbprint`) under the kid in `slot`: the key
   * before is withdrawn then (`key_withdrawn` when a token it verified is still valid), and the
   * kid's history starts again, as a new key's: its slot.
   */
  #replaced(held: IssuerKeys, slot: number, at: number, previous: number, thumbprint: string): number {
    const kid = held.kid(slot) as string;
    if (held.time(slot, WITHDRAWN) === null) {
      held.setTime(slot, WITHDRAWN, at);
      const expiry = held.time(slot, LATEST_EXPIRY);
      if (expiry !== null && expiry * 1000 > at) this.#breach(held, slot, 'key_withdrawn');
    }
    held.forget(slot);
    const fresh = held.add(kid, at, previous === 0 ? null : previous, thumbprint);
    if (fresh !== slot) this.#unlog(held, slot);
    this.#changed(held, fresh);
    return fresh;
  }

  /**
   * Forgets the withdrawn keys of an issuer kept past the retention, and all but the
   * {@link WITHDRAWN_KEPT} latest withdrawn.
   */
  #trim(held: IssuerKeys): void {
    const cutoff = this.#rules.now() - this.#rules.retention() * 1000;
    const withdrawn: { slot: number; at: number }[] = [];
    for (const slot of held.slots()) {
      const at = held.time(slot, WITHDRAWN);
      if (at === null) continue;
      if (at < cutoff) this.#forget(held, slot);
      else withdrawn.push({ slot, at });
    }
    if (withdrawn.length > WITHDRAWN_KEPT) {
      withdrawn.sort((a, b) => b.at - a.at);
      for (const { slot } of withdrawn.slice(WITHDRAWN_KEPT)) this.#forget(held, slot);
    }
    if (held.size === 0 && this.#issuers.get(held.issuer) === held) this.#issuers.delete(held.issuer);
  }

  /**
   * `issuer` left the registry at `at` (ms): its keys are withdrawn then (no breach: the keys
   * did not leave its JWKS) and forgotten here, once the changes have been asked for.
   */
  removed(issuer: string, at: number): void {
    const held = this.#issuers.get(issuer);
    if (held === undefined) return;
    this.#issuers.delete(issuer);
    if (!this.#followed) {
      this.#log.delete(held);
      return;
    }
    for (const slot of held.slots()) {
      if (held.time(slot, WITHDRAWN) !== null) continue;
      held.setTime(slot, WITHDRAWN, at);
      this.#changed(held, slot);
    }
  }

  #forget(held: IssuerKeys, slot: number): void {
    held.forget(slot);
    this.#unlog(held, slot);
  }

  #changed(held: IssuerKeys, slot: number): void {
    this.#version += 1;
    held.setVersion(slot, this.#version);
    let slots = this.#log.get(held);
    if (slots === undefined) {
      slots = new Set();
      this.#log.set(held, slots);
    }
    slots.add(slot);
  }

  #unlog(held: IssuerKeys, slot: number): void {
    const slots = this.#log.get(held);
    if (slots === undefined) return;
    slots.delete(slot);
    if (slots.size === 0) this.#log.delete(held);
  }

  /** `key` has just verified a token with `times`, at `at` (ms). A lookup or two, a few comparisons. */
  used(key: PreparedKey, at: number, times: TokenTimes): void {
    const place = this.#byKey.get(key);
    if (place === undefined) return;
    const { keys: held, kid } = place;
    // The slot it had when listed, unless the key was forgotten since (then its kid's slot now, if any).
    const slot = held.kid(place.slot) === kid ? place.slot : held.slot(kid);
    // Another key under the kid now (its history taken in from another instance): not this one's.
    if (slot === undefined) return;
    const thumbprint = held.thumbprint(slot);
    if (thumbprint !== null && place.thumbprint !== null && thumbprint !== place.thumbprint) return;
    this.#changed(held, slot);
    held.setTime(slot, LAST_USED, at);
    const expiry = held.time(slot, LATEST_EXPIRY);
    if (expiry === null || times.expiry > expiry) held.setTime(slot, LATEST_EXPIRY, times.expiry);
    if (held.time(slot, FIRST_USED) === null) {
      held.setTime(slot, FIRST_USED, at);
      // Published after `publishedAfter`: used before the lead has passed since then, it was used early.
      const publishedAfter = held.time(slot, PUBLISHED_AFTER);
      if (publishedAfter !== null && at - publishedAfter < this.#rules.publishLead * 1000) this.#breach(held, slot, 'key_used_early');
    }
    const firstSeen = held.time(slot, FIRST_SEEN) as number;
    if (times.iat * 1000 - firstSeen > this.#rules.maxKeyAge * 1000 && !held.hasBreach(slot, 'key_rotation_overdue')) {
      this.#breach(held, slot, 'key_rotation_overdue');
    }
  }

  #breach(held: IssuerKeys, slot: number, type: KeyBreach): void {
    if (!held.addBreach(slot, type)) return;
    this.#changed(held, slot);
    emit(this.#onEvent, { type, issuer: held.issuer, kid: held.kid(slot) as string, key: held.entry(slot) });
  }

  /**
   * The latest expiry `entry` claims, bounded by what this verifier accepts: a token verified at
   * its `lastUsed` (and not after now) expires at most `longestValidity` later; none without a use.
   * So a stored expiry no verifier could have seen (written by hand) raises no `key_withdrawn`.
   */
  #boundedExpiry(entry: KeyHistoryEntry): number | null {
    if (entry.latestExpiry === null || entry.lastUsed === null) return null;
    const usedBy = Math.min(entry.lastUsed, this.#rules.now()) / 1000;
    return Math.min(entry.latestExpiry, Math.floor(usedBy + this.#rules.longestValidity(entry.issuer)));
  }

  /**
   * Takes in `entries` kept elsewhere (see `Verifier.mergeKeyHistory`), then trims as a download
   * does each issuer whose keys they add or withdraw (an entry that only moves times costs no pass
   * over its issuer's keys): past {@link KEYS_KEPT} keys of an issuer, new ones are left out.
   * Each key taken in counts as changed here unless `stored` (the entries come from the store
   * the changes go to, which need not have them back).
   */
  merge(entries: readonly KeyHistoryEntry[], stored: boolean): void {
    const merged = new Set<IssuerKeys>();
    for (const entry of entries) {
      const held = this.#keysOf(entry.issuer);
      let slot = held.slot(entry.kid);
      const thumbprint = entry.thumbprint ?? null;
      const before = slot === undefined ? null : held.thumbprint(slot);
      if (slot !== undefined && before !== null && thumbprint !== null && before !== thumbprint) {
        // Two keys under one kid: the one first seen later is the kid's key now, the other gone.
        if (entry.firstSeen <= (held.time(slot, FIRST_SEEN) as number)) {
          if (stored) this.#changed(held, slot);
          continue;
        }
        held.forget(slot);
        this.#unlog(held, slot);
        slot = undefined;
      }
      if (slot === undefined) {
        if (held.size >= KEYS_KEPT) continue;
        slot = held.add(entry.kid, entry.firstSeen, entry.publishedAfter, thumbprint);
        merged.add(held);
      } else if (before === null && thumbprint !== null) {
        held.setThumbprint(slot, thumbprint);
      }
      if (entry.firstSeen < (held.time(slot, FIRST_SEEN) as number)) {
        held.setTime(slot, FIRST_SEEN, entry.firstSeen);
        held.setTime(slot, PUBLISHED_AFTER, entry.publishedAfter);
      }
      if (!stored) this.#changed(held, slot);
      if (this.#mergeInto(held, slot, entry)) merged.add(held);
      // The store's row lacks what is known here (deleted by hand, say, and written again by an
      // instance that met the key since): written back, so that every instance converges.
      else if (stored && this.#ahead(held, slot, entry)) this.#changed(held, slot);
    }
    for (const held of merged) if (this.#issuers.get(held.issuer) === held) this.#trim(held);
  }

  /** Whether `slot` holds what `entry` (of its key) lacks: an earlier sighting, use or withdrawal, a later use or expiry, a breach. */
  #ahead(held: IssuerKeys, slot: number, entry: KeyHistoryEntry): boolean {
    const firstUsed = held.time(slot, FIRST_USED);
    const lastUsed = held.time(slot, LAST_USED);
    const expiry = held.time(slot, LATEST_EXPIRY);
    const withdrawn = held.time(slot, WITHDRAWN);
    return (
      (held.time(slot, FIRST_SEEN) as number) < entry.firstSeen ||
      (held.thumbprint(slot) !== null && (entry.thumbprint ?? null) === null) ||
      (firstUsed !== null && (entry.firstUsed === null || firstUsed < entry.firstUsed)) ||
      (lastUsed !== null && (entry.lastUsed === null || lastUsed > entry.lastUsed)) ||
      (expiry !== null && (entry.latestExpiry === null || expiry > entry.latestExpiry)) ||
      (withdrawn !== null && (entry.withdrawn === null || withdrawn < entry.withdrawn)) ||
      held.breaches(slot).some((breach) => !entry.breaches.includes(breach))
    );
  }

  /** Merges `entry`'s uses, expiry, withdrawal and breaches into `slot`: whether it withdrew the key. */
  #mergeInto(held: IssuerKeys, slot: number, entry: KeyHistoryEntry): boolean {
    held.setTime(slot, FIRST_USED, earliest(held.time(slot, FIRST_USED), entry.firstUsed));
    held.setTime(slot, LAST_USED, latest(held.time(slot, LAST_USED), entry.lastUsed));
    held.setTime(slot, LATEST_EXPIRY, latest(held.time(slot, LATEST_EXPIRY), this.#boundedExpiry(entry)));
    for (const breach of entry.breaches) held.addBreach(slot, breach);
    if (held.time(slot, WITHDRAWN) !== null || entry.withdrawn === null) return false;
    held.setTime(slot, WITHDRAWN, entry.withdrawn);
    return true;
  }

  /**
   * The keys changed here after version `after` (0: every key changed here), and the version
   * now. Asked after the version last asked after or a later one (one store following the
   * history), it costs what changed since; asked after an earlier one, a pass over every key.
   */
  changes(after: number): KeyHistoryChanges {
    this.#followed = true;
    const entries: KeyHistoryEntry[] = [];
    if (after >= this.#logged) {
      entries.push(...this.#loggedAfter(after));
      this.#logged = after;
    } else {
      for (const held of this.#issuers.values()) {
        for (const slot of held.slots()) if (held.version(slot) > after) entries.push(held.entry(slot));
      }
    }
    const retention = this.#rules.retention();
    return { entries, through: this.#version, retention, withdrawnBefore: this.#rules.now() - retention * 1000 };
  }

  /**
   * The logged keys changed after `after`, one entry per issuer and kid: an issuer removed and
   * added back leaves its removed keys in the log beside the new ones, and of the same kid only
   * the latest change is handed out (a store writes them in one statement, which may name a row
   * once). What was handed out before (at or below `after`) leaves the log.
   */
  #loggedAfter(after: number): KeyHistoryEntry[] {
    const latest = new Map<string, { held: IssuerKeys; slot: number }>();
    for (const [held, slots] of this.#log) {
      for (const slot of slots) {
        if (held.version(slot) <= after) {
          slots.delete(slot);
          continue;
        }
        const key = `${held.issuer}\n${held.kid(slot) as string}`;
        const other = latest.get(key);
        if (other === undefined || other.held.version(other.slot) < held.version(slot)) latest.set(key, { held, slot });
      }
      if (slots.size === 0) this.#log.delete(held);
    }
    return Array.from(latest.values(), ({ held, slot }) => held.entry(slot));
  }

  #keysOf(issuer: string): IssuerKeys {
    let held = this.#issuers.get(issuer);
    if (held === undefined) {
      held = new IssuerKeys(issuer);
      this.#issuers.set(issuer, held);
    }
    return held;
  }

  /** Every key remembered, by issuer then first sighting. */
  snapshot(): KeyHistoryEntry[] {
    const entries: KeyHistoryEntry[] = [];
    for (const held of this.#issuers.values()) for (const slot of held.slots()) entries.push(held.entry(slot));
    return entries;
  }
}

function earliest(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b);
}

function latest(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.max(a, b);
}

const BREACHES: ReadonlySet<string> = new Set<KeyBreach>(['key_used_early', 'key_rotation_overdue', 'key_withdrawn']);

function checkTime(where: string, field: string, value: unknown, nullable: boolean): void {
  if (nullable && value === null) return;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new TypeError(
      `${where}.${field} must be a time in milliseconds since the epoch${nullable ? ', or null' : ''}, got ${describeValue(value)}`,
    );
  }
}

/**
 * Checks one key history entry taken in from elsewhere (a database row, say); a bad one throws a
 * `TypeError` naming `where` and the field. The one home of these rules.
 */
export function checkKeyHistoryEntry(where: string, raw: unknown): KeyHistoryEntry {
  if (typeof raw !== 'object' || raw === null) {
    throw new TypeError(`${where} must be an object (a key history entry), got ${describeValue(raw)}`);
  }
  const entry = raw as Record<string, unknown>;
  for (const field of ['issuer', 'kid'] as const) {
    if (typeof entry[field] !== 'string' || entry[field] === '') {
      throw new TypeError(`${where}.${field} must be a non-empty string, got ${describeValue(entry[field])}`);
    }
  }
  // No token names a longer kid (the header's rule), so no verifier records one: such an entry
  // was written by hand, and would cost memory without bound.
  if ((entry.kid as string).length > MAX_KID_LENGTH) {
    throw new TypeError(
      `${where}.kid must be at most ${MAX_KID_LENGTH} characters (the longest kid a token may name), got ${(entry.kid as string).length} characters: leave the entry out`,
    );
  }
  const thumbprint = entry.thumbprint;
  if (thumbprint !== undefined && thumbprint !== null && (typeof thumbprint !== 'string' || !THUMBPRINT.test(thumbprint))) {
    throw new TypeError(
      `${where}.thumbprint must be an RFC 7638 SHA-256 thumbprint (43 base64url characters), or null; got ${describeValue(thumbprint)}`,
    );
  }
  checkTime(where, 'firstSeen', entry.firstSeen, false);
  for (const field of ['publishedAfter', 'firstUsed', 'lastUsed', 'withdrawn'] as const) checkTime(where, field, entry[field], true);
  checkTime(where, 'latestExpiry', entry.latestExpiry, true);
  const breaches = entry.breaches;
  if (!Array.isArray(breaches) || !breaches.every((breach) => BREACHES.has(breach as string))) {
    const wrong = Array.isArray(breaches) ? breaches.find((breach) => !BREACHES.has(breach as string)) : breaches;
    throw new TypeError(
      `${where}.breaches must be an array of ${[...BREACHES].join(', ')}, got ${describeValue(wrong)}${Array.isArray(breaches) ? ' in it' : ''}`,
    );
  }
  return raw as KeyHistoryEntry;
}

/** Checks key histories taken in from elsewhere; a bad one throws a `TypeError` naming the entry and field. */
export function checkKeyHistory(owner: string, entries: unknown): readonly KeyHistoryEntry[] {
  if (!Array.isArray(entries)) {
    throw new TypeError(`${owner}: entries must be an array of key history entries, got ${describeValue(entries)}`);
  }
  entries.forEach((raw: unknown, index) => {
    checkKeyHistoryEntry(`${owner}: entries[${index}]`, raw);
  });
  return entries as readonly KeyHistoryEntry[];
}
