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

type KeyRecord = { -readonly [Field in keyof KeyHistoryEntry]: KeyHistoryEntry[Field] } & {
  breaches: KeyBreach[];
  /** The history's version when this record last changed here (0: taken in, unchanged since). */
  version: number;
};

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

/** The key history of one verifier. */
export class KeyHistory {
  readonly #rules: KeyRules;
  readonly #onEvent: VerifierEventListener | undefined;
  readonly #issuers = new Map<string, Map<string, KeyRecord>>();
  /** Each prepared key's record, so that a verification costs one lookup. */
  readonly #byKey = new WeakMap<PreparedKey, KeyRecord>();
  /**
   * The records changed here since the changes were last asked for, oldest change first (a
   * record changed again moves to the end), with removed issuers' records until handed out: so
   * asking costs what changed, not the history.
   */
  readonly #log = new Set<KeyRecord>();
  /** The version the changes were last asked after; the log holds every change past it. */
  #logged = 0;
  /** Whether the changes were ever asked for: until then, removed issuers' records are not kept. */
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
    const records = this.#records(issuer);
    let added = 0;
    for (const [kid, key] of keys) {
      let record = records.get(kid);
      if (record === undefined) {
        if (added >= NEW_KIDS_RECORDED || records.size >= KEYS_KEPT) continue;
        added += 1;
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
          version: 0,
        };
        records.set(kid, record);
        this.#changed(record);
      }
      if (record.withdrawn !== null) {
        record.withdrawn = null;
        this.#changed(record);
      }
      this.#byKey.set(key, record);
    }
    for (const record of records.values()) {
      if (keys.has(record.kid) || record.withdrawn !== null) continue;
      record.withdrawn = at;
      this.#changed(record);
      if (record.latestExpiry !== null && record.latestExpiry * 1000 > at) this.#breach(record, 'key_withdrawn');
    }
    this.#trim(issuer, records);
  }

  /**
   * Forgets the withdrawn keys of `issuer` kept past the retention, and all but the
   * {@link WITHDRAWN_KEPT} latest withdrawn.
   */
  #trim(issuer: string, records: Map<string, KeyRecord>): void {
    const cutoff = this.#rules.now() - this.#rules.retention() * 1000;
    const withdrawn: KeyRecord[] = [];
    for (const record of records.values()) {
      if (record.withdrawn === null) continue;
      if (record.withdrawn < cutoff) this.#forget(records, record);
      else withdrawn.push(record);
    }
    if (withdrawn.length > WITHDRAWN_KEPT) {
      withdrawn.sort((a, b) => (b.withdrawn as number) - (a.withdrawn as number));
      for (const record of withdrawn.slice(WITHDRAWN_KEPT)) this.#forget(records, record);
    }
    if (records.size === 0) this.#issuers.delete(issuer);
  }

  /**
   * `issuer` left the registry at `at` (ms): its keys are withdrawn then (no breach: the keys
   * did not leave its JWKS) and forgotten here, once the changes have been asked for.
   */
  removed(issuer: string, at: number): void {
    const records = this.#issuers.get(issuer);
    if (records === undefined) return;
    this.#issuers.delete(issuer);
    for (const record of records.values()) {
      if (!this.#followed) this.#log.delete(record);
      else if (record.withdrawn === null) {
        record.withdrawn = at;
        this.#changed(record);
      }
    }
  }

  #forget(records: Map<string, KeyRecord>, record: KeyRecord): void {
    records.delete(record.kid);
    this.#log.delete(record);
  }

  #changed(record: KeyRecord): void {
    this.#version += 1;
    record.version = this.#version;
    this.#log.delete(record);
    this.#log.add(record);
  }

  /** `key` has just verified a token with `times`, at `at` (ms). One lookup, a few comparisons. */
  used(key: PreparedKey, at: number, times: TokenTimes): void {
    const record = this.#byKey.get(key);
    if (record === undefined) return;
    this.#changed(record);
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
    this.#changed(record);
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

  /**
   * Takes in `entries` kept elsewhere (see `Verifier.mergeKeyHistory`), then trims as a download
   * does each issuer whose keys they add or withdraw (an entry that only moves times costs no pass
   * over its issuer's keys): past {@link KEYS_KEPT} keys of an issuer, new ones are left out.
   * Each key taken in counts as changed here unless `stored` (the entries come from the store
   * the changes go to, which need not have them back).
   */
  merge(entries: readonly KeyHistoryEntry[], stored: boolean): void {
    const merged = new Set<string>();
    for (const given of entries) {
      const entry = { ...given, latestExpiry: this.#boundedExpiry(given) };
      const records = this.#records(entry.issuer);
      const record = records.get(entry.kid);
      if (record === undefined) {
        if (records.size >= KEYS_KEPT) continue;
        const created: KeyRecord = { ...entry, breaches: [...entry.breaches], version: 0 };
        records.set(entry.kid, created);
        merged.add(entry.issuer);
        if (!stored) this.#changed(created);
        continue;
      }
      if (!stored) this.#changed(record);
      if (entry.firstSeen < record.firstSeen) {
        record.firstSeen = entry.firstSeen;
        record.publishedAfter = entry.publishedAfter;
      }
      record.firstUsed = earliest(record.firstUsed, entry.firstUsed);
      record.lastUsed = latest(record.lastUsed, entry.lastUsed);
      record.latestExpiry = latest(record.latestExpiry, entry.latestExpiry);
      if (record.withdrawn === null && entry.withdrawn !== null) {
        record.withdrawn = entry.withdrawn;
        merged.add(entry.issuer);
      }
      for (const breach of entry.breaches) if (!record.breaches.includes(breach)) record.breaches.push(breach);
    }
    for (const issuer of merged) {
      const records = this.#issuers.get(issuer);
      if (records !== undefined) this.#trim(issuer, records);
    }
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
      // The log is in version order: what was handed out before is at its start, and goes.
      for (const record of this.#log) {
        if (record.version > after) entries.push(copy(record));
        else this.#log.delete(record);
      }
      this.#logged = after;
    } else {
      for (const records of this.#issuers.values()) {
        for (const record of records.values()) if (record.version > after) entries.push(copy(record));
      }
    }
    const retention = this.#rules.retention();
    return { entries, through: this.#version, retention, withdrawnBefore: this.#rules.now() - retention * 1000 };
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

function copy({ version: _version, ...record }: KeyRecord): KeyHistoryEntry {
  return Object.freeze({ ...record, breaches: Object.freeze([...record.breaches]) });
}
