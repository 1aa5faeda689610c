/** Option checks and the guard of callbacks, shared by the PostgreSQL followers and their listener. */

/** Checks a whole number of milliseconds from `min` to `max` (or `0` when `zero`); `fallback` when absent. */
export function checkMs(owner: string, name: string, value: unknown, fallback: number, min: number, max: number, zero = false): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || ((value < min || value > max) && !(zero && value === 0))) {
    throw new TypeError(
      `${owner}: ${name} must be a whole number of milliseconds from ${min} to ${max}${zero ? ', or 0' : ''}, got ${String(value)}`,
    );
  }
  return value;
}

/** Calls `listener`, shielding the caller from what it throws (a hook must not stop a follower). */
export function notify(listener: () => void): void {
  try {
    listener();
  } catch {
    // A listener's failure is its own.
  }
}

/** Checks an optional callback option. */
export function checkFunction(owner: string, name: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'function') throw new TypeError(`${owner}: ${name} must be a function`);
}
