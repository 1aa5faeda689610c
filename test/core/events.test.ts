/**
 * A verifier's `onEvent` listener cannot change a verification's outcome, nor end the process:
 * what it throws is ignored, and so is a promise it returns that rejects (an `async` listener
 * whose exporter fails), which would otherwise be an unhandled rejection.
 */
import { describe, expect, test } from 'vitest';
import type { VerifierEvent } from '../../src/index.js';
import { useFixture } from '../support/fixture.js';
import { watchUnhandledRejections } from '../support/unhandled-rejections.js';

const fx = useFixture();

describe('onEvent', () => {
  test('a listener that throws at every event leaves the verification its outcome', async () => {
    const seen: string[] = [];
    const verifier = fx.verifier({
      onEvent: (event: VerifierEvent) => {
        seen.push(event.type);
        throw new Error('exporter down');
      },
    });
    const auth = await verifier.verify(await fx.issuer.token());
    expect(auth.tenant.ern).toBe('ern:acme/tenants/t-1');
    expect(seen).toContain('verify_success');
  });

  test('an async listener whose promise rejects leaves no unhandled rejection', async () => {
    const unhandled = watchUnhandledRejections();
    try {
      const seen: string[] = [];
      const verifier = fx.verifier({
        onEvent: async (event: VerifierEvent) => {
          seen.push(event.type);
          throw new Error('exporter down');
        },
      });
      const auth = await verifier.verify(await fx.issuer.token());
      await unhandled.settled();
      expect(auth.tenant.ern).toBe('ern:acme/tenants/t-1');
      expect(seen).toContain('verify_success');
      expect(unhandled.reasons).toEqual([]);
    } finally {
      unhandled.stop();
    }
  });
});
