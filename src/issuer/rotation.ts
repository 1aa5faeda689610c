/**
 * The rotation schedule: when a key is published, when it signs, when it retires and when it
 * leaves the JWKS. Pure functions of the key records and the time, so that every instance reading
 * the same records publishes the same keys.
 *
 * A key is published `publishLead` before it signs (the gateway's caches meet it before any token
 * does); a new key is published every `interval`; a retired key stays published until every token
 * it signed has expired (its retirement plus the longest token lifetime) plus `retentionMargin`.
 */
import type { KeyRecord } from './key-store.js';
import { rejectUnknownOptions, secondsOption } from './options.js';

/** The rotation schedule's settings, in seconds. */
export interface RotationOptions {
  /**
   * Seconds between two keys starting to sign.
   * @default 172800 (48 h)
   */
  readonly interval?: number;
  /**
   * Seconds a new key is published before it signs. The gateway's contract asks for at least an hour;
   * less is allowed for tests only.
   * @default 3600 (1 h)
   */
  readonly publishLead?: number;
  /**
   * Seconds a retired key stays published after the last token it signed has expired (covers clock
   * skew and caches).
   * @default 3600 (1 h)
   */
  readonly retentionMargin?: number;
}

/** {@link RotationOptions} with every default applied. */
export interface RotationPolicy {
  readonly interval: number;
  readonly publishLead: number;
  readonly retentionMargin: number;
}

/** The defaults: 48 h, 1 h, 1 h. */
export const DEFAULT_ROTATION: RotationPolicy = Object.freeze({
  interval: 172_800,
  publishLead: 3600,
  retentionMargin: 3600,
});

const DAY = 86_400;
const KNOWN: ReadonlySet<string> = new Set(['interval', 'publishLead', 'retentionMargin']);

/** Checks `rotation`. @throws {TypeError} naming the option. */
export function checkRotation(value: unknown): RotationPolicy {
  if (value === undefined) return DEFAULT_ROTATION;
  if (typeof value !== 'object' || value === null) throw new TypeError('createIssuer: rotation must be an object');
  rejectUnknownOptions('createIssuer: rotation', value, KNOWN);
  const o = value as Record<string, unknown>;
  const interval = secondsOption('createIssuer: rotation.interval', o.interval, DEFAULT_ROTATION.interval, {
    min: 0,
    max: 365 * DAY,
    exclusiveMin: true,
  });
  const publishLead = secondsOption('createIssuer: rotation.publishLead', o.publishLead, DEFAULT_ROTATION.publishLead, {
    min: 0,
    max: 30 * DAY,
  });
  const retentionMargin = secondsOption('createIssuer: rotation.retentionMargin', o.retentionMargin, DEFAULT_ROTATION.retentionMargin, {
    min: 0,
    max: 30 * DAY,
  });
  if (publishLead >= interval) throw new TypeError('createIssuer: rotation.publishLead must be shorter than rotation.interval');
  return Object.freeze({ interval, publishLead, retentionMargin });
}

/** Records in signing order (by `signsFrom`, then `publishedAt`). */
export function bySigningOrder(records: readonly KeyRecord[]): KeyRecord[] {
  return [...records].sort((a, b) => a.signsFrom - b.signsFrom || a.publishedAt - b.publishedAt);
}

/**
 * Index of the key signing at `at` (ms) in `ordered`, or -1 when none is: none has started, or the
 * latest to start has retired (its successor was compromised before it could sign).
 */
export function signerIndex(ordered: readonly KeyRecord[], at: number): number {
  let found = -1;
  ordered.forEach((record, index) => {
    if (record.signsFrom <= at) found = index;
  });
  const retired = ordered[found]?.retiredAt;
  return retired !== undefined && retired <= at ? -1 : found;
}

/** When key `index` retired, as of `at` (ms): set, or its successor's start if that has come. */
export function retiredAt(ordered: readonly KeyRecord[], index: number, at: number): number | undefined {
  const record = ordered[index] as KeyRecord;
  if (record.retiredAt !== undefined) return record.retiredAt;
  const next = ordered[index + 1];
  return next !== undefined && next.signsFrom <= at ? next.signsFrom : undefined;
}

/** When key `index` leaves the JWKS (ms), once it is known. `keep` is the longest lifetime plus the margin (s). */
export function unpublishAt(ordered: readonly KeyRecord[], index: number, at: number, keep: number): number | undefined {
  const retired = retiredAt(ordered, index, at);
  return retired === undefined ? undefined : retired + keep * 1000;
}

/** `true` when key `index` is in the JWKS at `at` (ms). */
export function isPublished(ordered: readonly KeyRecord[], index: number, at: number, keep: number): boolean {
  const record = ordered[index] as KeyRecord;
  const leaves = unpublishAt(ordered, index, at, keep);
  return record.publishedAt <= at && (leaves === undefined || at < leaves);
}

/** The records with every retirement that has happened by `at` (ms) written down. */
export function settleRetirements(ordered: readonly KeyRecord[], at: number): KeyRecord[] {
  return ordered.map((record, index) => {
    const retired = retiredAt(ordered, index, at);
    return retired === undefined || record.retiredAt !== undefined ? record : { ...record, retiredAt: retired };
  });
}

/**
 * When the next key must start signing, if a new key is due at `at` (ms): none is waiting to sign,
 * and the signing key is within `publishLead` of its `interval` (or there is no signing key).
 */
export function nextKeyStart(ordered: readonly KeyRecord[], at: number, policy: RotationPolicy): number | undefined {
  if (ordered.some((record) => record.signsFrom > at)) return undefined;
  const signer = ordered[signerIndex(ordered, at)];
  const lead = policy.publishLead * 1000;
  if (signer === undefined) return at + lead;
  const due = signer.signsFrom + policy.interval * 1000;
  return at >= due - lead ? Math.max(at + lead, due) : undefined;
}
