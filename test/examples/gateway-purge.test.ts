/**
 * The example gateway on PostgreSQL purges expired idempotency keys every minute
 * (examples/gateway/stores.mjs): all of them, not one batch. An authenticated caller creating
 * links faster than one batch a minute must not leave a backlog that grows for ever.
 */
import { describe, expect, it } from 'vitest';
// @ts-expect-error the example is plain JavaScript
import { PURGE_BATCH, purgeAllExpired } from '../../examples/gateway/stores.mjs';

/** A store whose `purgeExpired()` deletes up to a batch of `expired` keys per call, counting its calls. */
function backlog(expired: number): { purgeExpired(): Promise<number>; calls: number; left: number } {
  const store = {
    calls: 0,
    left: expired,
    async purgeExpired(): Promise<number> {
      store.calls += 1;
      const deleted = Math.min(store.left, PURGE_BATCH);
      store.left -= deleted;
      return deleted;
    },
  };
  return store;
}

describe('the example gateway purging expired idempotency keys', () => {
  it('deletes a backlog of two and a half batches in one purge', async () => {
    const store = backlog(PURGE_BATCH * 2.5);
    expect(await purgeAllExpired(store)).toBe(PURGE_BATCH * 2.5);
    expect([store.left, store.calls]).toEqual([0, 3]);
  });

  it('looks once more after a batch exactly full, and stops at an empty one', async () => {
    const store = backlog(PURGE_BATCH);
    expect(await purgeAllExpired(store)).toBe(PURGE_BATCH);
    expect([store.left, store.calls]).toEqual([0, 2]);
  });

  it('stops at the first failure, rejecting with it', async () => {
    const failure = new Error('connection lost');
    await expect(purgeAllExpired({ purgeExpired: () => Promise.reject(failure) })).rejects.toBe(failure);
  });
});
