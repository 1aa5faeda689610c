/** Calling a caller's hook from a follower or a listener, and the default hooks' log lines. */
import { capHint, ignoreRejection } from '../internal/index.js';

/**
 * Calls `listener`, shielding the caller from what it throws and from the rejection of a promise
 * it returns (a hook must not stop a follower, nor end the process as an unhandled rejection).
 */
export function notify(listener: () => void): void {
  try {
    ignoreRejection(listener());
  } catch {
    // A listener's failure is its own.
  }
}

/**
 * `hook` shielded as {@link notify} shields a listener: what it throws is ignored, so that it
 * cannot fail a start-up or a read, nor escape a retry as an unhandled rejection.
 */
export function shielded<A extends unknown[]>(hook: (...args: A) => void): (...args: A) => void {
  return (...args) => notify(() => hook(...args));
}

/** An error's message, cut and escaped for one log line (what a default hook logs). */
export function oneLine(error: unknown): string {
  return capHint(error instanceof Error ? error.message : String(error));
}
