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
 */

/**
 * What a loaded machine may add to a real-time bound, in milliseconds: time spent waiting for a
 * core, not on the network.
 */
export const LOADED_MARGIN_MS = 3000;

/** The longest a test waits for an effect whose delay it does not assert, in milliseconds. */
export const PATIENCE_MS = 60_000;
