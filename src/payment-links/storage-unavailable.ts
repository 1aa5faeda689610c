/**
 * The failure a store raises when its backing service cannot be reached: answered 503 with
 * `Retry-After`, never 500. Nothing was written by the call that failed.
 */
import { PaymentLinkError } from './errors.js';

/** Options of {@link StorageUnavailableError}. */
export interface StorageUnavailableErrorOptions {
  /**
   * Seconds before a retry may succeed; `Retry-After` sends it in whole seconds from 1 to a day
   * (a value that is no finite number as 1).
   * @default 1
   */
  readonly retryAfter?: number | undefined;
  /**
   * The underlying failure (the driver's error, say), as the error's `cause`; never sent to the
   * client.
   * @default undefined
   */
  readonly cause?: unknown;
}

/** Raised by a store whose database is unreachable (answered 503 `storage_unavailable`). */
export class StorageUnavailableError extends Error {
  override readonly name = 'StorageUnavailableError';
  readonly code = 'storage_unavailable' as const;
  /** Seconds before a retry may succeed. */
  readonly retryAfter: number;

  constructor(message: string, options: StorageUnavailableErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.retryAfter = options.retryAfter ?? 1;
  }
}

/** The 503 `storage_unavailable` refusal of a request that met {@link StorageUnavailableError}. */
export function storageUnavailable(error: StorageUnavailableError): PaymentLinkError {
  return new PaymentLinkError('storage_unavailable', 'Storage is unavailable for a moment and nothing was changed; retry later.', {
    retryAfter: error.retryAfter,
    cause: error,
  });
}
