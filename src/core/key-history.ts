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
import type { PreparedKey } from './signature.js';

/** One key of one issuer, as {@link KeyHistory.snapshot} reports it. */
export interface KeyHistoryEntry {
  readonly issuer: string;
  readonly kid: string;
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
}

type KeyRecord = { -readonly [Field in keyof KeyHistoryEntry]: KeyHistoryEntry[Field] } & { breaches: KeyBreach[] };

/** Withdrawn keys remembered per issuer; older ones are forgotten (a JWKS may list many kids). */
const WITHDRAWN_KEPT = 32;

/** The key history of one verifier. */
export class KeyHistory {
  readonly #rules: KeyRules;
  readonly #onEvent: VerifierEventListener | undefined;
  readonly #issuers = new Map<string, Map<string, KeyRecord>>();
  /** Each prepared key's record, so that a verification costs one lookup. */
  readonly #byKey = new WeakMap<PreparedKey, KeyRecord>();

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
    const records = this.#records(issuer);
    for (const [kid, key] of keys) {
      let record = records.get(kid);
      if (record === undefined) {
        record = {
          issuer,
          kid,
          firstSeen: at,
          publishedAfter: previous === 0 ? null : previous,
          firstUsed: null,
          lastUsed: null,
          latestExpiry: null,
          withdrawn: null,
          breaches: [],
        };
        records.set(kid, record);
      }
      record.withdrawn = null;
      this.#byKey.set(key, record);
    }
    let withdrawn = 0;
    for (const record of records.values()) {
      if (keys.has(record.kid)) continue;
      if (record.withdrawn === null) {
        record.withdrawn = at;
        if (record.latestExpiry !== null && record.latestExpiry * 1000 > at) this.#breach(record, 'key_withdrawn');
      }
      withdrawn += 1;
    }
    for (const record of records.values()) {
      if (withdrawn <= WITHDRAWN_KEPT) break;
      if (record.withdrawn === null) continue;
      records.delete(record.kid);
      withdrawn -= 1;
    }
  }

  /** `key` has just verified a token with `times`, at `at` (ms). One lookup, a few comparisons. */
  used(key: PreparedKey, at: number, times: TokenTimes): void {
    const record = this.#byKey.get(key);
    if (record === undefined) return;
    record.lastUsed = at;
    if (record.latestExpiry === null || times.expiry > record.latestExpiry) record.latestExpiry = times.expiry;
    if (record.firstUsed === null) {
      record.firstUsed = at;
      // Published after `publishedAfter`: used before the lead has passed since then, it was used early.
      if (record.publishedAfter !== null && at - record.publishedAfter < this.#rules.publishLead * 1000) {
        this.#breach(record, 'key_used_early');
      }
    }
    if (times.iat * 1000 - record.firstSeen > this.#rules.maxKeyAge * 1000 && !record.breaches.includes('key_rotation_overdue')) {
      this.#breach(record, 'key_rotation_overdue');
    }
  }

  #breach(record: KeyRecord, type: KeyBreach): void {
    if (record.breaches.includes(type)) return;
    record.breaches.push(type);
    emit(this.#onEvent, { type, issuer: record.issuer, kid: record.kid, key: copy(record) });
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

  /** Takes in `entries` kept elsewhere (see `Verifier.mergeKeyHistory`). */
  merge(entries: readonly KeyHistoryEntry[]): void {
    for (const given of entries) {
      const entry = { ...given, latestExpiry: this.#boundedExpiry(given) };
      const records = this.#records(entry.issuer);
      const record = records.get(entry.kid);
      if (record === undefined) {
        records.set(entry.kid, { ...entry, breaches: [...entry.breaches] });
        continue;
      }
      if (entry.firstSeen < record.firstSeen) {
        record.firstSeen = entry.firstSeen;
        record.publishedAfter = entry.publishedAfter;
      }
      record.firstUsed = earliest(record.firstUsed, entry.firstUsed);
      record.lastUsed = latest(record.lastUsed, entry.lastUsed);
      record.latestExpiry = latest(record.latestExpiry, entry.latestExpiry);
      record.withdrawn ??= entry.withdrawn;
      for (const breach of entry.breaches) if (!record.breaches.includes(breach)) record.breaches.push(breach);
    }
  }

  #records(issuer: string): Map<string, KeyRecord> {
    let records = this.#issuers.get(issuer);
    if (records === undefined) {
      records = new Map();
      this.#issuers.set(issuer, records);
    }
    return records;
  }

  /** Every key remembered, by issuer then first sighting. */
  snapshot(): KeyHistoryEntry[] {
    return [...this.#issuers.values()].flatMap((records) => [...records.values()].map(copy));
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
    throw new TypeError(`${where}.${field} must be a time in milliseconds since the epoch${nullable ? ', or null' : ''}`);
  }
}

/**
 * Checks one key history entry taken in from elsewhere (a database row, say); a bad one throws a
 * `TypeError` naming `where` and the field. The one home of these rules.
 */
export function checkKeyHistoryEntry(where: string, raw: unknown): KeyHistoryEntry {
  if (typeof raw !== 'object' || raw === null) throw new TypeError(`${where} must be an object`);
  const entry = raw as Record<string, unknown>;
  for (const field of ['issuer', 'kid'] as const) {
    if (typeof entry[field] !== 'string' || entry[field] === '') throw new TypeError(`${where}.${field} must be a non-empty string`);
  }
  checkTime(where, 'firstSeen', entry.firstSeen, false);
  for (const field of ['publishedAfter', 'firstUsed', 'lastUsed', 'withdrawn'] as const) checkTime(where, field, entry[field], true);
  checkTime(where, 'latestExpiry', entry.latestExpiry, true);
  const breaches = entry.breaches;
  if (!Array.isArray(breaches) || !breaches.every((breach) => BREACHES.has(breach as string))) {
    throw new TypeError(`${where}.breaches must be an array of ${[...BREACHES].join(', ')}`);
  }
  return raw as KeyHistoryEntry;
}

/** Checks key histories taken in from elsewhere; a bad one throws a `TypeError` naming the entry and field. */
export function checkKeyHistory(owner: string, entries: unknown): readonly KeyHistoryEntry[] {
  if (!Array.isArray(entries)) throw new TypeError(`${owner}: entries must be an array of key history entries`);
  entries.forEach((raw: unknown, index) => {
    checkKeyHistoryEntry(`${owner}: entries[${index}]`, raw);
  });
  return entries as readonly KeyHistoryEntry[];
}

function copy(record: KeyRecord): KeyHistoryEntry {
  return Object.freeze({ ...record, breaches: Object.freeze([...record.breaches]) });
}
