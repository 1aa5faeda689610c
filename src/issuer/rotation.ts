/**
 * The rotation schedule: when a key is published, when it signs, when it retires and when it
 * leaves the JWKS. Pure functions of the key records and the time, so that every instance reading
 * the same records publishes the same keys.
 *
 * The schedule holds two kinds of key. The chain signs in turn: a key is published `publishLead`
 * before it may sign, and its successor takes over `interval` after that, so that no key signs
 * more than `publishLead + interval` after its publication (the gateway's verifier checks the age
 * of the keys it meets); a retired key stays published until every token it signed has expired
 * (its retirement plus the longest token lifetime) plus `retentionMargin`. A standby is published
 * with each key of the chain, so that it has been published for `publishLead` by the time that key
 * signs: when the signing key is compromised, the standby takes over at once, for the rest of that
 * key's turn. A standby leaves the JWKS once a younger one may sign, having signed nothing.
 */
import { describeValue, numberOption, rejectUnknownOptions, optionNames } from '../internal/index.js';
import type { KeyRecord } from './key-store.js';

/** The rotation schedule's settings, in seconds. */
export interface RotationOptions {
  /**
   * Seconds between two keys starting to sign: a key's successor takes over this long after the key
   * could first sign (its publication plus `publishLead`).
   * @default 172800 (48 h)
   */
  readonly interval?: number | undefined;
  /**
   * Seconds a new key is published before it signs. The gateway's contract asks for at least an hour;
   * less is allowed for tests only.
   * @default 3600 (1 h)
   */
  readonly publishLead?: number | undefined;
  /**
   * Seconds a retired key stays published after the last token it signed has expired (covers clock
   * skew and caches).
   * @default 3600 (1 h)
   */
  readonly retentionMargin?: number | undefined;
}

/** {@link RotationOptions} with every default applied, in seconds. */
export interface RotationPolicy {
  /** Seconds between two keys starting to sign (see {@link RotationOptions.interval}). */
  readonly interval: number;
  /** Seconds a new key is published before it signs (see {@link RotationOptions.publishLead}). */
  readonly publishLead: number;
  /**
   * Seconds a retired key stays published after the last token it signed has expired (see
   * {@link RotationOptions.retentionMargin}).
   */
  readonly retentionMargin: number;
}

/** The defaults: 48 h, 1 h, 1 h. */
export const DEFAULT_ROTATION: RotationPolicy = Object.freeze({
  interval: 172_800,
  publishLead: 3600,
  retentionMargin: 3600,
});

const DAY = 86_400;
const KNOWN = optionNames<RotationPolicy>({ interval: true, publishLead: true, retentionMargin: true });

/** Checks `rotation`. @throws {TypeError} naming the option. */
export function checkRotation(value: unknown): RotationPolicy {
  if (value === undefined) return DEFAULT_ROTATION;
  if (typeof value !== 'object' || value === null)
    throw new TypeError(`createIssuer: rotation must be an object, got ${describeValue(value)}`);
  rejectUnknownOptions('createIssuer: rotation', value, KNOWN);
  const o = value as Record<string, unknown>;
  const interval = numberOption('createIssuer', 'rotation.interval', o.interval, DEFAULT_ROTATION.interval, {
    unit: 'seconds',
    min: 0,
    max: 365 * DAY,
    exclusiveMin: true,
  });
  const publishLead = numberOption('createIssuer', 'rotation.publishLead', o.publishLead, DEFAULT_ROTATION.publishLead, {
    unit: 'seconds',
    min: 0,
    max: 30 * DAY,
  });
  const retentionMargin = numberOption('createIssuer', 'rotation.retentionMargin', o.retentionMargin, DEFAULT_ROTATION.retentionMargin, {
    unit: 'seconds',
    min: 0,
    max: 30 * DAY,
  });
  if (publishLead >= interval)
    throw new TypeError(
      `createIssuer: rotation.publishLead must be shorter than rotation.interval (${interval} s), got ${publishLead} s: shorten publishLead or lengthen interval`,
    );
  return Object.freeze({ interval, publishLead, retentionMargin });
}

/** The schedule's keys by kind: the chain in signing order, the standbys oldest first. */
export interface Schedule {
  /** The keys that sign in turn, by `signsFrom` (then `publishedAt`): retired, signing, waiting. */
  readonly chain: readonly KeyRecord[];
  /** The keys standing by to take over from a compromised key, by `publishedAt`. */
  readonly standbys: readonly KeyRecord[];
}

/** The schedule's keys as they are saved: the chain, then the standbys. */
export function recordsOf(schedule: Schedule): KeyRecord[] {
  return [...schedule.chain, ...schedule.standbys];
}

/** Records in signing order (by `signsFrom`, then `publishedAt`). */
export function bySigningOrder(records: readonly KeyRecord[]): KeyRecord[] {
  return [...records].sort((a, b) => a.signsFrom - b.signsFrom || a.publishedAt - b.publishedAt);
}

/** Sorts `records` (none of them compromised) into a {@link Schedule}. */
export function scheduleOf(records: readonly KeyRecord[]): Schedule {
  return {
    chain: bySigningOrder(records.filter((record) => record.standby !== true)),
    standbys: records
      .filter((record) => record.standby === true)
      .sort((a, b) => a.publishedAt - b.publishedAt || a.signsFrom - b.signsFrom),
  };
}

/**
 * Index of the key signing at `at` (ms) in `chain`, or -1 when none is: none has started, or the
 * latest to start has retired (its successor was compromised before it could sign).
 */
export function signerIndex(chain: readonly KeyRecord[], at: number): number {
  let found = -1;
  chain.forEach((record, index) => {
    if (record.signsFrom <= at) found = index;
  });
  const retired = chain[found]?.retiredAt;
  return retired !== undefined && retired <= at ? -1 : found;
}

/** When key `index` of the chain retired, as of `at` (ms): set, or its successor's start if that has come. */
export function retiredAt(chain: readonly KeyRecord[], index: number, at: number): number | undefined {
  const record = chain[index] as KeyRecord;
  if (record.retiredAt !== undefined) return record.retiredAt;
  const next = chain[index + 1];
  return next !== undefined && next.signsFrom <= at ? next.signsFrom : undefined;
}

/**
 * When key `index` of the chain leaves the JWKS (ms), once it is known. `keep` is this issuer's
 * longest lifetime plus its margin (s); a longer `retainFor` recorded with the key wins.
 */
export function unpublishAt(chain: readonly KeyRecord[], index: number, at: number, keep: number): number | undefined {
  const retired = retiredAt(chain, index, at);
  return retired === undefined ? undefined : retired + Math.max(keep, chain[index]?.retainFor ?? 0) * 1000;
}

/**
 * The schedule with `keep` (s) recorded as `retainFor` on every key that may still sign (not yet
 * retired at `at`, ms, or a standby) and records less: the tokens this issuer signs with it may
 * live that long, whatever settings a later start has.
 */
export function recordRetention(schedule: Schedule, at: number, keep: number): Schedule {
  const stamp = (record: KeyRecord): KeyRecord => ((record.retainFor ?? 0) >= keep ? record : { ...record, retainFor: keep });
  const { chain, standbys } = schedule;
  return {
    chain: chain.map((record, index) => (retiredAt(chain, index, at) === undefined ? stamp(record) : record)),
    standbys: standbys.map(stamp),
  };
}

/** When standby `index` leaves the JWKS (ms): once the next younger standby may sign. */
export function standbyLeavesAt(standbys: readonly KeyRecord[], index: number): number | undefined {
  return standbys[index + 1]?.signsFrom;
}

/**
 * Whether a key is in the JWKS at `at` (ms): until it leaves. A key is saved when it is published,
 * so one whose `publishedAt` is after `at` was published by a clock ahead of this one (or this
 * clock is behind): it is listed all the same. Listing a key early is harmless; leaving it out
 * would make every verifier downloading from this instance drop the key the others sign with.
 */
function isListed(leaves: number | undefined, at: number): boolean {
  return leaves === undefined || at < leaves;
}

/** The keys in the JWKS at `at` (ms): the chain's, newest first, then the standbys', newest first. */
export function publishedKeys(schedule: Schedule, at: number, keep: number): KeyRecord[] {
  const { chain, standbys } = schedule;
  return [
    ...chain.filter((_record, index) => isListed(unpublishAt(chain, index, at, keep), at)).reverse(),
    ...standbys.filter((_record, index) => isListed(standbyLeavesAt(standbys, index), at)).reverse(),
  ];
}

/** The schedule without the keys whose time in the JWKS is over at `at` (ms), and those keys' kids. */
export function withoutDeparted(schedule: Schedule, at: number, keep: number): { schedule: Schedule; removed: string[] } {
  const removed: string[] = [];
  const stays = (record: KeyRecord, leaves: number | undefined): boolean => {
    if (leaves === undefined || at < leaves) return true;
    removed.push(record.kid);
    return false;
  };
  const { chain, standbys } = schedule;
  return {
    schedule: {
      chain: chain.filter((record, index) => stays(record, unpublishAt(chain, index, at, keep))),
      standbys: standbys.filter((record, index) => stays(record, standbyLeavesAt(standbys, index))),
    },
    removed,
  };
}

/** The schedule with every retirement that has happened by `at` (ms) written down. */
export function settleRetirements(schedule: Schedule, at: number): Schedule {
  const { chain } = schedule;
  return {
    chain: chain.map((record, index) => {
      const retired = retiredAt(chain, index, at);
      return retired === undefined || record.retiredAt !== undefined ? record : { ...record, retiredAt: retired };
    }),
    standbys: schedule.standbys,
  };
}

/**
 * When the next key of the chain must start signing, if a new key is due at `at` (ms): none is
 * waiting to sign, and the signing key is within `publishLead` of the end of its turn, `interval`
 * after it could first sign (or there is no signing key).
 */
export function nextKeyStart(chain: readonly KeyRecord[], at: number, policy: RotationPolicy): number | undefined {
  if (chain.some((record) => record.signsFrom > at)) return undefined;
  const signer = chain[signerIndex(chain, at)];
  const lead = policy.publishLead * 1000;
  if (signer === undefined) return at + lead;
  // From its publication, not from its first token: a standby that took over late ends its turn on time.
  const due = signer.publishedAt + lead + policy.interval * 1000;
  return at >= due - lead ? Math.max(at + lead, due) : undefined;
}

/**
 * `true` when the chain's newest key (signing, or waiting to) has no standby published with it or
 * after it: one is published now, so that it may sign by the time that key does, and stays young
 * enough to sign to the end of that key's turn.
 */
export function needsStandby(schedule: Schedule): boolean {
  const { chain, standbys } = schedule;
  const newest = chain.at(-1);
  if (newest === undefined) return false;
  return !standbys.some((standby) => standby.publishedAt >= newest.publishedAt);
}

/**
 * The standby that would take the turn starting at `slot` (ms): the one that may sign soonest, the
 * youngest of equals (it may sign longest).
 */
export function chooseStandby(standbys: readonly KeyRecord[], slot: number): KeyRecord | undefined {
  let chosen: KeyRecord | undefined;
  for (const standby of standbys) {
    if (chosen === undefined || Math.max(slot, standby.signsFrom) <= Math.max(slot, chosen.signsFrom)) chosen = standby;
  }
  return chosen;
}

/**
 * The schedule once a standby has taken the turn of a compromised key, starting at `slot` (ms): the
 * {@link chooseStandby} joins the chain and signs from `slot`, or from when it may first sign if
 * that is later. Unchanged when no standby is held, or when the chain's next key signs no later.
 */
export function promoteStandby(schedule: Schedule, slot: number): Schedule {
  const chosen = chooseStandby(schedule.standbys, slot);
  if (chosen === undefined) return schedule;
  const start = Math.max(slot, chosen.signsFrom);
  const following = schedule.chain.find((record) => record.signsFrom >= slot);
  if (following !== undefined && following.signsFrom <= start) return schedule;
  const { standby: _standby, ...record } = chosen;
  const promoted: KeyRecord = { ...record, signsFrom: start };
  return {
    chain: bySigningOrder([...schedule.chain, promoted]),
    standbys: schedule.standbys.filter((standby) => standby !== chosen),
  };
}
