/**
 * The rejections Node reports as unhandled while a test runs (outside a test runner, one ends the
 * Node process): start watching, do the work, wait until `settled()`, then read `reasons`.
 */
export interface UnhandledRejections {
  /** The reasons reported since watching started. */
  readonly reasons: readonly unknown[];
  /** Two turns of the event loop: a rejection left unhandled has been reported by then. */
  settled(): Promise<void>;
  /** Stops watching. */
  stop(): void;
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Starts collecting unhandled rejections; call `stop()` when the test ends. */
export function watchUnhandledRejections(): UnhandledRejections {
  const reasons: unknown[] = [];
  const record = (reason: unknown): void => {
    reasons.push(reason);
  };
  process.on('unhandledRejection', record);
  return {
    reasons,
    async settled() {
      await turn();
      await turn();
    },
    stop() {
      process.off('unhandledRejection', record);
    },
  };
}
