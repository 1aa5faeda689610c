/**
 * A settable clock for the verifier's `now` and the test issuer's `now`: max-age, cooldown,
 * back-off, the stale window and every claim read it. Network timeouts stay in real time.
 */

/** A clock that only moves when told. */
export interface FakeClock {
  /** Milliseconds since the epoch, as `Date.now` would give them. */
  readonly now: () => number;
  /** Moves the clock forward by `seconds`. */
  advance(seconds: number): void;
}

/** The default start: a fixed moment, so that runs are reproducible. */
export const CLOCK_START = Date.UTC(2030, 0, 1, 0, 0, 0);

/** A {@link FakeClock} starting at `start` (milliseconds since the epoch). */
export function fakeClock(start: number = CLOCK_START): FakeClock {
  let current = start;
  return {
    now: () => current,
    advance(seconds) {
      current += seconds * 1000;
    },
  };
}
