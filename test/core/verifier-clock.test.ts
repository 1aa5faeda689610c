import { afterEach, describe, expect, test, vi } from 'vitest';
import { createTestVerifier } from '../../src/testing/index.js';
import { T0, outcome, useFixture } from '../support/fixture.js';

const fx = useFixture();

afterEach(() => {
  vi.useRealTimers();
});

describe('the default clock', () => {
  test('reads Date.now() at each call, so fake timers installed after the verifier was built are honoured', async () => {
    // The issuer mints on the fixture's clock (T0); the verifier has no `now` of its own.
    const token = await fx.issuer.token({ expt: Math.floor(T0 / 1000) + 3600 });
    const verifier = createTestVerifier(fx.issuers);
    vi.useFakeTimers({ toFake: ['Date'], now: T0 });
    expect(await outcome(verifier.verify(token))).toBe('ok');
    vi.setSystemTime(T0 + 2 * 3600 * 1000);
    expect(await outcome(verifier.verify(token))).toBe('token_expired');
  });
});
