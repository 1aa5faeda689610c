/**
 * When a verified token's result enters the result cache.
 *
 * A result is worth keeping only if its token comes back; one that never does costs the garbage
 * collector a copy as it ages and pushes out results that would have been used. So by default a
 * token is cached on its second verification: the first only leaves a mark, one number in a
 * fixed table, and a token signed afresh for every call costs the cache nothing.
 */

/**
 * `'second-use'`: a token's result is cached when it is verified the second time (lately);
 * `'first-use'`: on its first verification.
 */
export type CacheAdmission = 'second-use' | 'first-use';

/** The admission policies, for option checks. */
export const CACHE_ADMISSIONS: readonly CacheAdmission[] = ['second-use', 'first-use'];

/** Fewest and most marks kept: 16 KiB to 4 MiB of table. */
const MIN_SLOTS = 4096;
const MAX_SLOTS = 1 << 20;

/** Marks for twice as many tokens as the cache holds, a power of two within the bounds. */
function slotsFor(maxEntries: number): number {
  let slots = MIN_SLOTS;
  while (slots < 2 * maxEntries && slots < MAX_SLOTS) slots *= 2;
  return slots;
}

/**
 * The marks of tokens verified once lately: a direct-mapped table of their cache indexes, which
 * allocates nothing per token. A mark lasts until another token's index maps to its slot. Two
 * tokens that share a slot may overwrite each other's marks (each then costs one more
 * verification) and an index that matches a mark is admitted (a result cached one use early);
 * neither changes an answer.
 */
export class SecondUseFilter {
  readonly #marks: Uint32Array;
  readonly #mask: number;

  constructor(maxEntries: number) {
    const slots = slotsFor(maxEntries);
    this.#marks = new Uint32Array(slots);
    this.#mask = slots - 1;
  }

  /**
   * Whether the token with cache index `index` (a 30-bit number) was verified lately; if not, it
   * is marked as verified now.
   */
  admits(index: number): boolean {
    const slot = index & this.#mask;
    const mark = index | 0x40000000;
    if (this.#marks[slot] === mark) return true;
    this.#marks[slot] = mark;
    return false;
  }
}
