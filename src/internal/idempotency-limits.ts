/**
 * The bounds an idempotency record lives within, shared by the payment-link handler, its
 * in-memory store and the PostgreSQL store, so that a store reading a record written elsewhere
 * (by hand, say) knows what no writer could have meant.
 */

/** The longest a store holds a key for one request (`leaseTime`), in milliseconds: a day. */
export const MAX_IDEMPOTENCY_LEASE_MS = 86_400_000;

/** The longest a key is remembered (`idempotencyKeyTtl`), in seconds: 30 days. */
export const MAX_IDEMPOTENCY_KEY_TTL_SECONDS = 2_592_000;
