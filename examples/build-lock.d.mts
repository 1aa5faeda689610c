/** Types of `build-lock.mjs` (plain JavaScript, so that examples/ensure-build.mjs runs on Node as it stands). */

export declare const LOCK_DEFAULTS: Readonly<{ staleMs: number; refreshMs: number; waitMs: number; pollMs: number }>;

export declare class LockTimeoutError extends Error {
  readonly code: 'lock_timeout';
}

export interface LockOptions {
  /** Untouched for this long (ms), a lock is stale and taken over. @default 60000 */
  readonly staleMs?: number;
  /** How often (ms) the holder touches its lock. @default 5000 */
  readonly refreshMs?: number;
  /** The longest (ms) a caller waits for a holder that keeps its lock fresh. @default 900000 */
  readonly waitMs?: number;
  /** How often (ms) a waiter looks at the lock again. @default 200 */
  readonly pollMs?: number;
  /** Told once, naming the holder, when the caller has to wait. */
  readonly onWait?: (holder: string) => void;
}

export declare function withLock<T>(path: string, work: () => Promise<T>, options?: LockOptions): Promise<T>;
