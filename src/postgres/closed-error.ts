/**
 * The refusal of a call that would read or write after `close()`: a heartbeat's `beat()`, a key
 * history's `flush()` or `attach()`, a registry's or the controls' `reload()` or `attach()`, a
 * directory's `start()`. Nothing was read or written; `close()` itself may be called again.
 */

/** A call made on a PostgreSQL follower, heartbeat or directory after its `close()`. */
export class ClosedError extends Error {
  override readonly name = 'ClosedError';
  readonly code = 'closed' as const;
  /** What was closed, by the name of what made it: `postgresHeartbeat`, `postgresRegistry`, `PostgresDirectory`… */
  readonly owner: string;

  /** @param why what the closed object refused, and what to do instead. */
  constructor(owner: string, why: string) {
    super(`${owner}: closed; ${why}`);
    this.owner = owner;
  }
}

/** The refusal of `call` (`beat()`, `flush()`…) after `close()`. */
export function calledAfterClose(owner: string, call: string): ClosedError {
  return new ClosedError(owner, `${call} cannot run after close() (make a new one)`);
}
