import { describe, expect, test } from 'vitest';
import type { Verifier } from '../../src/index.js';
import { outcome, useFixture } from '../support/fixture.js';

const fx = useFixture();
const ENGINES = ['node', 'webcrypto'] as const;

/** A `fetch` that holds every JWKS download until `release()`; `started` resolves at the first. */
function heldFetch() {
  let release!: () => void;
  let markStarted!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  const fetch = async (input: string, init: RequestInit): Promise<Response> => {
    markStarted();
    await released;
    return globalThis.fetch(input, init);
  };
  return { fetch, started, release };
}

type Stop = (verifier: Verifier) => void;
const STOPS: readonly (readonly [string, Stop, string])[] = [
  ['revokeKey()', (verifier) => verifier.revokeKey(fx.issuer.issuer, fx.issuer.signingKey.kid), 'key_revoked'],
  ['suspendIssuer()', (verifier) => verifier.suspendIssuer(fx.issuer.issuer), 'issuer_suspended'],
];

describe('nothing is accepted after revokeKey() or suspendIssuer() returns, verifications in flight included', () => {
  test.each(STOPS)(
    'a verification waiting for the JWKS download is refused after %s (attack: riding a slow download past a revocation)',
    async (_name, stop, code) => {
      for (const crypto of ENGINES) {
        const held = heldFetch();
        const verifier = fx.verifier({ crypto, fetch: held.fetch });
        const pending = outcome(verifier.verify(await fx.issuer.token()));
        await held.started;
        stop(verifier);
        held.release();
        expect(await pending).toBe(code);
      }
    },
  );

  test.each(STOPS)('verifications waiting for their signature are refused after %s', async (_name, stop, code) => {
    for (const crypto of ENGINES) {
      const verifier = fx.verifier({ crypto, cache: false });
      await verifier.warmUp();
      const tokens = await Promise.all(Array.from({ length: 8 }, (_, n) => fx.issuer.token({ n })));
      // Started in one turn: the first may be checked at once, the others wait for libuv's pool.
      const pending = tokens.map((token) => outcome(verifier.verify(token)));
      stop(verifier);
      expect(await Promise.all(pending)).toEqual(tokens.map(() => code));
    }
  });

  test.each(STOPS)(
    'a cached result whose keys are being reloaded is refused after %s, though its answer was under way',
    async (_name, stop, code) => {
      const verifier = fx.verifier({ cacheAdmission: 'first-use' });
      const token = await fx.issuer.token({ expt: Math.floor(fx.clock() / 1000) + 3600 });
      expect(await outcome(verifier.verify(token))).toBe('ok');
      fx.clock.advance(700);
      const pending = outcome(verifier.verify(token));
      stop(verifier);
      expect(await pending).toBe(code);
    },
  );

  test('verifications in flight when keys are reloaded without their key are refused (unknown_key)', async () => {
    const verifier = fx.verifier({ cache: false });
    await verifier.warmUp();
    const tokens = await Promise.all(Array.from({ length: 4 }, (_, n) => fx.issuer.token({ n })));
    await fx.issuer.rotate({ retire: true });
    const pending = tokens.map((token) => outcome(verifier.verify(token)));
    await verifier.refresh(fx.issuer.issuer);
    const answers = await Promise.all(pending);
    // The first may have been checked and accepted before the reload began; none after it.
    expect(answers.slice(1)).toEqual(['unknown_key', 'unknown_key', 'unknown_key']);
    expect(await outcome(verifier.verify(tokens[0] as string))).toBe('unknown_key');
  });
});

describe('concurrent verifications on a cold cache', () => {
  test.each(ENGINES)('200 at once on the %s engine make exactly one JWKS request, and all pass', async (crypto) => {
    const verifier = fx.verifier({ crypto });
    const tokens = await Promise.all(Array.from({ length: 200 }, (_, n) => fx.issuer.token({ user_ern: `//users/u-${n}` })));
    const before = fx.issuer.jwksRequests;
    const answers = await Promise.all(tokens.map((token) => outcome(verifier.verify(token))));
    expect(answers).toEqual(tokens.map(() => 'ok'));
    expect(fx.issuer.jwksRequests - before).toBe(1);
  });
});
