/**
 * The order in which a followed registry publishes a change: what it reports as applied
 * (`through`, `registry()`, and so the heartbeat a fleet wait reads) never names a change before
 * the verifiers attached have it. The change's digest is held back by a gate the test opens, so
 * the moment between reading the change and telling the verifiers is forced, not hoped for.
 */
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { IssuerRegistry, createVerifier } from '../../src/index.js';
import { addIssuer, migrate, postgresRegistry } from '../../src/postgres/index.js';
import { RegistryDigest } from '../../src/postgres/registry-digest.js';
import { type TestIssuer, createTestIssuer } from '../../src/testing/index.js';
import { eventually } from './eventually.js';
import { createTestPglite } from './pglite.js';

const AUDIENCE = 'https://payments.test';

describe('postgresRegistry applying a change', () => {
  let lite: PGlite;
  let issuer: TestIssuer;
  beforeAll(async () => {
    issuer = await createTestIssuer({ audience: AUDIENCE, issuer: 'https://order.test', product: 'order', kid: 'order-1' });
    lite = await createTestPglite();
    await migrate(lite, { only: 'registry' });
  });
  afterAll(async () => {
    await lite?.close();
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('reports a change as applied (through, registry()) only once the attached verifiers have it', async () => {
    const registry = await postgresRegistry(lite, { listen: false, pollInterval: 600_000, onEvent: () => undefined });
    try {
      const verifier = createVerifier({ registry: new IssuerRegistry([], { allowEmpty: true }), audience: AUDIENCE });
      registry.attach(verifier);
      const before = registry.through;
      const change = await addIssuer(lite, issuer.entry, { by: 'test' });
      let open = (): void => undefined;
      const gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      const update = RegistryDigest.prototype.update;
      const digesting = vi.spyOn(RegistryDigest.prototype, 'update').mockImplementation(async function (this: RegistryDigest, ...args) {
        await gate;
        return update.apply(this, args);
      });
      const reading = registry.reload();
      await eventually('the digest of the change is being computed', () => digesting.mock.calls.length > 0);
      const seen = { through: registry.through, issuers: registry.registry().issuers, verifier: verifier.registry.issuers };
      open();
      await reading;
      expect(seen).toEqual({ through: before, issuers: [], verifier: [] });
      expect([registry.through, verifier.registry.issuers]).toEqual([change.id, [issuer.issuer]]);
    } finally {
      await registry.close();
    }
  });
});
