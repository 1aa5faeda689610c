/** Calling a caller's hook from a follower or a listener. */

/** Calls `listener`, shielding the caller from what it throws (a hook must not stop a follower). */
export function notify(listener: () => void): void {
  try {
    listener();
  } catch {
    // A listener's failure is its own.
  }
}
