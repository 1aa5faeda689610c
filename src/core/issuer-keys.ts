/**
 * One issuer's keys in a key history, held as columns rather than an object per key: a slot per
 * key in one `Float64Array` (its times, version and breaches), a kid → slot map, and the kids by
 * slot. A history of 100,000 keys is then a few objects per issuer plus a string per kid, which a
 * garbage collection traces in a fraction of the time an object per key (and its hidden class,
 * times and breach array) took. A forgotten key's slot is reused, every column written afresh.
 */
import type { KeyBreach } from './events.js';
import type { KeyHistoryEntry } from './key-history.js';

/** The columns of a slot: the entry's times (ms, `latestExpiry` in s), its version, its breaches. */
export const FIRST_SEEN = 0;
export const PUBLISHED_AFTER = 1;
export const FIRST_USED = 2;
export const LAST_USED = 3;
export const LATEST_EXPIRY = 4;
export const WITHDRAWN = 5;
/** The history's version when the key last changed here (0: taken in, unchanged since). */
const VERSION = 6;
/** The breaches in the order found, two bits each: 1 + their index in {@link BREACH_CODES}. */
const BREACHES = 7;
const COLUMNS = 8;

/** A column that holds a time: `null` is held as `NaN`, which no checked time can be. */
export type TimeColumn =
  | typeof FIRST_SEEN
  | typeof PUBLISHED_AFTER
  | typeof FIRST_USED
  | typeof LAST_USED
  | typeof LATEST_EXPIRY
  | typeof WITHDRAWN;

const BREACH_CODES: readonly KeyBreach[] = ['key_used_early', 'key_rotation_overdue', 'key_withdrawn'];
const BREACH_BITS = 2;
const BREACH_MASK = 0b11;

/** Slots first allocated for an issuer; doubled as it takes more keys. */
const FIRST_CAPACITY = 4;

/** The keys of one issuer in a {@link KeyHistory}. */
export class IssuerKeys {
  readonly issuer: string;
  /** Each kid's slot, in the order the kids were taken in (a kid forgotten and taken again goes last). */
  readonly #slots = new Map<string, number>();
  /** The kid in each slot (`undefined`: a free slot). */
  readonly #kids: (string | undefined)[] = [];
  /** The thumbprint of the key in each slot (`null`: not known). */
  readonly #prints: (string | null)[] = [];
  /** Slots freed by forgotten keys, reused before the columns grow. */
  readonly #free: number[] = [];
  #columns = new Float64Array(FIRST_CAPACITY * COLUMNS);

  constructor(issuer: string) {
    this.issuer = issuer;
  }

  /** The number of keys held. */
  get size(): number {
    return this.#slots.size;
  }

  /** `kid`'s slot, `undefined` when it is not held. */
  slot(kid: string): number | undefined {
    return this.#slots.get(kid);
  }

  /** The kid in `slot`, `undefined` for a free slot. */
  kid(slot: number): string | undefined {
    return this.#kids[slot];
  }

  /** The slots held, in the order their kids were taken in. */
  slots(): IterableIterator<number> {
    return this.#slots.values();
  }

  /**
   * Takes in `kid` (not held) with no times but `firstSeen` and `publishedAfter`, its key's
   * `thumbprint`, no breach, version 0: its slot.
   */
  add(kid: string, firstSeen: number, publishedAfter: number | null, thumbprint: string | null): number {
    const slot = this.#free.pop() ?? this.#grow();
    this.#kids[slot] = kid;
    this.#prints[slot] = thumbprint;
    this.#slots.set(kid, slot);
    this.#columns.fill(Number.NaN, slot * COLUMNS, (slot + 1) * COLUMNS);
    this.setTime(slot, FIRST_SEEN, firstSeen);
    this.setTime(slot, PUBLISHED_AFTER, publishedAfter);
    this.setVersion(slot, 0);
    this.#columns[slot * COLUMNS + BREACHES] = 0;
    return slot;
  }

  /** A new slot at the end, the columns doubled when full. */
  #grow(): number {
    const slot = this.#kids.length;
    if ((slot + 1) * COLUMNS > this.#columns.length) {
      const grown = new Float64Array(this.#columns.length * 2);
      grown.set(this.#columns);
      this.#columns = grown;
    }
    this.#kids.push(undefined);
    this.#prints.push(null);
    return slot;
  }

  /** Forgets the key in `slot`; the slot is free for another. */
  forget(slot: number): void {
    const kid = this.#kids[slot];
    if (kid === undefined) return;
    this.#slots.delete(kid);
    this.#kids[slot] = undefined;
    this.#prints[slot] = null;
    this.#free.push(slot);
  }

  /** The RFC 7638 thumbprint of the key in `slot`, `null` when not known. */
  thumbprint(slot: number): string | null {
    return this.#prints[slot] ?? null;
  }

  setThumbprint(slot: number, thumbprint: string | null): void {
    this.#prints[slot] = thumbprint;
  }

  time(slot: number, column: TimeColumn): number | null {
    const value = this.#columns[slot * COLUMNS + column] as number;
    return Number.isNaN(value) ? null : value;
  }

  setTime(slot: number, column: TimeColumn, value: number | null): void {
    this.#columns[slot * COLUMNS + column] = value ?? Number.NaN;
  }

  version(slot: number): number {
    return this.#columns[slot * COLUMNS + VERSION] as number;
  }

  setVersion(slot: number, version: number): void {
    this.#columns[slot * COLUMNS + VERSION] = version;
  }

  /** The rules the key in `slot` broke, in the order found. */
  breaches(slot: number): KeyBreach[] {
    const found: KeyBreach[] = [];
    for (let bits = this.#columns[slot * COLUMNS + BREACHES] as number; bits !== 0; bits >>= BREACH_BITS) {
      found.push(BREACH_CODES[(bits & BREACH_MASK) - 1] as KeyBreach);
    }
    return found;
  }

  hasBreach(slot: number, breach: KeyBreach): boolean {
    const code = BREACH_CODES.indexOf(breach) + 1;
    for (let bits = this.#columns[slot * COLUMNS + BREACHES] as number; bits !== 0; bits >>= BREACH_BITS) {
      if ((bits & BREACH_MASK) === code) return true;
    }
    return false;
  }

  /** Adds `breach` after those found before: `false` when the key had broken it already. */
  addBreach(slot: number, breach: KeyBreach): boolean {
    const found = this.breaches(slot);
    if (found.includes(breach)) return false;
    const index = slot * COLUMNS + BREACHES;
    this.#columns[index] = (this.#columns[index] as number) | ((BREACH_CODES.indexOf(breach) + 1) << (BREACH_BITS * found.length));
    return true;
  }

  /** The key in `slot` as a frozen entry. */
  entry(slot: number): KeyHistoryEntry {
    return Object.freeze({
      issuer: this.issuer,
      kid: this.#kids[slot] as string,
      thumbprint: this.#prints[slot] ?? null,
      firstSeen: this.time(slot, FIRST_SEEN) as number,
      publishedAfter: this.time(slot, PUBLISHED_AFTER),
      firstUsed: this.time(slot, FIRST_USED),
      lastUsed: this.time(slot, LAST_USED),
      latestExpiry: this.time(slot, LATEST_EXPIRY),
      withdrawn: this.time(slot, WITHDRAWN),
      breaches: Object.freeze(this.breaches(slot)),
    });
  }
}
