/**
 * `verifyNow`: a cached token is answered without waiting (the context itself, or its failure
 * thrown at once); any other verification is a promise, as from `verify`.
 */
import { describe, expect, test } from 'vitest';
import { AuthError, type VerifierEvent } from '../../src/index.js';
import { seconds, useFixture } from '../support/fixture.js';
import { verifyUntilCached } from '../support/result-cache.js';

const fx = useFixture();

function thrownAtOnce(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure thrown at once');
}

describe('verifyNow', () => {
  test('answers a cached token at once with its AuthContext itself, not a promise', async () => {
    const verifier = fx.verifier();
    const token = await fx.issuer.token();
    const cached = await verifyUntilCached(verifier, token);
    expect(verifier.verifyNow(token)).toBe(cached);
  });

  test('answers a token not in the cache with a promise of its AuthContext', async () => {
    const verifier = fx.verifier();
    const pending = verifier.verifyNow(await fx.issuer.token());
    expect(pending).toBeInstanceOf(Promise);
    expect((await pending).tenant.ern).toBe('ern:acme/tenants/t-1');
  });

  test('throws issuer_suspended at once for a cached token of a suspended issuer, where verify rejects', async () => {
    const verifier = fx.verifier();
    const token = await fx.issuer.token();
    await verifyUntilCached(verifier, token);
    verifier.suspendIssuer(fx.issuer.issuer);
    expect(thrownAtOnce(() => verifier.verifyNow(token))).toMatchObject({ code: 'issuer_suspended' });
    await expect(verifier.verify(token)).rejects.toMatchObject({ code: 'issuer_suspended' });
  });

  test('throws token_expired at once for a cached token past its expiry', async () => {
    const verifier = fx.verifier();
    const iat = seconds(fx.clock);
    const token = await fx.issuer.token({ iat, expt: iat + 120 });
    await verifyUntilCached(verifier, token);
    fx.clock.advance(120 + 31); // its keys still fresh (max-age 600 s)
    expect(thrownAtOnce(() => verifier.verifyNow(token))).toMatchObject({ code: 'token_expired' });
  });

  test('throws token_too_large at once, before the cache is looked at; verify rejects with it, never throws', async () => {
    const verifier = fx.verifier({ maxTokenBytes: 1024 });
    const token = 'a'.repeat(1025);
    expect(thrownAtOnce(() => verifier.verifyNow(token))).toBeInstanceOf(AuthError);
    const pending = verifier.verify(token);
    expect(pending).toBeInstanceOf(Promise);
    await expect(pending).rejects.toMatchObject({ code: 'token_too_large' });
  });

  test("waits for the key when a cached token's keys are past their max-age, then answers the same context", async () => {
    const verifier = fx.verifier();
    const token = await fx.issuer.token({ iat: seconds(fx.clock), expt: seconds(fx.clock) + 3600 });
    const cached = await verifyUntilCached(verifier, token);
    fx.clock.advance(600);
    const pending = verifier.verifyNow(token);
    expect(pending).toBeInstanceOf(Promise);
    expect(await pending).toBe(cached);
  });

  test('reports a failure found at once, and one found later, to onEvent as verify_failure', async () => {
    const events: VerifierEvent[] = [];
    const verifier = fx.verifier({ onEvent: (event) => events.push(event) });
    const token = await fx.issuer.token();
    await verifyUntilCached(verifier, token);
    verifier.suspendIssuer(fx.issuer.issuer);
    thrownAtOnce(() => verifier.verifyNow(token));
    await expect(verifier.verifyNow(`${token.slice(0, -4)}AAAA`)).rejects.toMatchObject({ code: 'issuer_suspended' });
    const failures = events.filter((event) => event.type === 'verify_failure');
    expect(failures.map((event) => event.type === 'verify_failure' && event.code)).toEqual(['issuer_suspended', 'issuer_suspended']);
  });
});

describe('holds', () => {
  test('holds a token once its result is cached, and only that exact token', async () => {
    const verifier = fx.verifier();
    const token = await fx.issuer.token();
    expect(verifier.holds(token)).toBe(false);
    await verifyUntilCached(verifier, token);
    expect(verifier.holds(token)).toBe(true);
    expect(verifier.holds(`${token}x`)).toBe(false);
    expect(verifier.holds(` ${token}`)).toBe(false);
  });

  test('reports nothing to onEvent', async () => {
    const events: VerifierEvent[] = [];
    const verifier = fx.verifier({ onEvent: (event) => events.push(event) });
    const token = await fx.issuer.token();
    await verifyUntilCached(verifier, token);
    const before = events.length;
    verifier.holds(token);
    verifier.holds('not.a.token');
    expect(events.length).toBe(before);
  });
});
