/**
 * Real time in the tests, on a loaded machine. Time-dependent behaviour runs on an injected clock
 * (`now`) or on fake timers; what is left runs in real time because real time is the point: a
 * statement timeout, a heartbeat, a change reaching another process. On a busy 2-core machine (a
 * load average of 10 or more, as with eight busy loops beside the suite) a process gets a fifth of
 * a core or less, and what takes it 50 ms of CPU takes a quarter of a second or more.
 *
 * - A real-time bound is asserted as "within the bound plus {@link LOADED_MARGIN_MS}", written out
 *   where it is asserted (`BOUND + LOADED_MARGIN_MS`). A test keeps the bound far enough from any
 *   other that could end the same wait (a default statement timeout of 5 s, the 60 s given to a
 *   call expected to fail at once, a poll interval) that the margin cannot hide which one did.
 * - A wait for an effect whose delay the test does not assert (a process starting, a connection
 *   dropped, a propagation the test only needs to have happened) polls for it up to
 *   {@link PATIENCE_MS} (test/postgres/eventually.ts), never sleeping a fixed time.
 *
 * Both are multiplied by `PAYGATE_TEST_TIME_SCALE` (a whole number from 1 to 10, default 1), and so are
 * the per-test and hook timeouts of vitest.config.ts, for a machine busier still: a load average
 * well above 10, a slow emulated CPU. A larger scale only loosens the margins (a bound the code
 * misses by less than the margin passes), so CI runs at 1.
 */

/** `PAYGATE_TEST_TIME_SCALE`, checked: 1 when unset. */
function timeScale(): number {
  const given = process.env.PAYGATE_TEST_TIME_SCALE;
  if (given === undefined || given === '') return 1;
  const scale = Number(given);
  if (!Number.isInteger(scale) || scale < 1 || scale > 10) {
    throw new Error(`PAYGATE_TEST_TIME_SCALE must be a whole number from 1 to 10, got ${JSON.stringify(given)}`);
  }
  return scale;
}

/** How many times the margins and the patience below are stretched (`PAYGATE_TEST_TIME_SCALE`). */
export const TIME_SCALE = timeScale();

/**
 * What a loaded machine may add to a real-time bound, in milliseconds: time spent waiting for a
 * core, not on the network.
 */
export const LOADED_MARGIN_MS = 3000 * TIME_SCALE;

/** The longest a test waits for an effect whose delay it does not assert, in milliseconds. */
export const PATIENCE_MS = 60_000 * TIME_SCALE;
