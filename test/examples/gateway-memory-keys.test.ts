/**
 * The example gateway in memory (examples/gateway/stores.mjs) holds each tenant to
 * MEMORY_KEYS_PER_TENANT live idempotency keys, so one tenant cannot fill the store that every
 * tenant shares and have the others' keys refused.
 */
import { describe, expect, it } from 'vitest';
import type { InMemoryIdempotencyStore } from '../../src/payment-links/index.js';
import { createTestIssuer } from '../../src/testing/index.js';
// @ts-expect-error the example is plain JavaScript
import { MEMORY_KEYS_PER_TENANT, openStores } from '../../examples/gateway/stores.mjs';
// @ts-expect-error the example is plain JavaScript
import { readSettings } from '../../examples/gateway/settings.mjs';

describe('the example gateway in memory and idempotency keys', () => {
  it("refuses a tenant's key past MEMORY_KEYS_PER_TENANT, and still takes another tenant's", async () => {
    const issuer = await createTestIssuer({ product: 'demo' });
    const stores = await openStores(readSettings({}), { seeds: [], memoryDirectory: undefined, issuers: [issuer.entry] });
    const idempotency = stores.idempotency as InMemoryIdempotencyStore;
    const claim = { fingerprint: 'f', now: 1000, expiresAt: 100_000 };
    for (let key = 0; key < MEMORY_KEYS_PER_TENANT; key++)
      await idempotency.claim({ ...claim, tenant: 'ern:demo/tenants/clinic-1', key: `k-${key}` });
    await expect(idempotency.claim({ ...claim, tenant: 'ern:demo/tenants/clinic-1', key: 'one-more' })).rejects.toMatchObject({
      code: 'idempotency_capacity',
    });
    expect(await idempotency.claim({ ...claim, tenant: 'ern:demo/tenants/clinic-2', key: 'k-0' })).toMatchObject({ state: 'claimed' });
    expect(MEMORY_KEYS_PER_TENANT).toBeLessThan(100_000);
  });
});
