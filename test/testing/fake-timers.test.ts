/**
 * vitest fake timers, installed before or after the issuer and the verifier are built: both read
 * the clock at every call, so `vi.setSystemTime()` moves tokens and verification alike.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { type TestIssuer, createTestIssuer, createTestVerifier } from '../../src/testing/index.js';

const HOUR = 3_600_000;

afterEach(() => {
  vi.useRealTimers();
});

describe('fake timers installed after building', () => {
  let issuer: TestIssuer;
  beforeAll(async () => {
    issuer = await createTestIssuer({ audience: 'https://payments.test' });
    await issuer.listen();
  });
  afterAll(() => issuer.close());

  test('a token minted before the clock moves an hour on is expired', async () => {
    const verifier = createTestVerifier(issuer);
    const token = await issuer.token();
    await expect(verifier.verify(token)).resolves.toBeDefined();
    vi.useFakeTimers();
    vi.setSystemTime(Date.now() + HOUR);
    await expect(verifier.verify(token)).rejects.toMatchObject({ code: 'token_expired', status: 401 });
  });

  test('a token minted after the clock moved verifies: issuer and verifier share the faked clock', async () => {
    const verifier = createTestVerifier(issuer);
    await verifier.warmUp();
    vi.useFakeTimers();
    vi.setSystemTime(Date.now() + HOUR);
    const token = await issuer.token();
    expect(issuer.claims().iat).toBe(Math.floor(Date.now() / 1000));
    await expect(verifier.verify(token)).resolves.toBeDefined();
  });
});

describe('fake timers installed before building', () => {
  const T0 = Date.UTC(2030, 0, 1);
  let issuer: TestIssuer;
  afterEach(() => issuer.close());

  test('the issuer mints on the faked clock and the verifier checks on it as it moves', async () => {
    vi.useFakeTimers({ now: T0 });
    issuer = await createTestIssuer({ audience: 'https://payments.test', lifetime: 300 });
    await issuer.listen();
    const verifier = createTestVerifier(issuer);
    const token = await issuer.token();
    expect(issuer.claims().iat).toBe(T0 / 1000);
    await expect(verifier.verify(token)).resolves.toBeDefined();
    vi.setSystemTime(T0 + 200_000);
    await expect(verifier.verify(token)).resolves.toBeDefined();
    vi.setSystemTime(T0 + 331_000);
    await expect(verifier.verify(token)).rejects.toMatchObject({ code: 'token_expired', status: 401 });
  });
});
