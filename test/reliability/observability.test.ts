/**
 * What a verifier reports through `onEvent`, so that a service can export metrics: each
 * verification's outcome (issuer, key, code) and duration, JWKS downloads (issuer, outcome,
 * duration, key count), result-cache hits and misses, key removals. No event ever carries a token, key material or a claim value.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Verifier, type VerifierEvent, createVerifier } from '../../src/index.js';
import { type TestIssuer, createTestIssuer, encodeSegment } from '../../src/testing/index.js';
import { fakeClock } from '../support/jwks-clock.js';
import { type FaultyJwks, serveFaultyJwks } from '../support/jwks-fault-server.js';
import { authRejection } from '../support/jwks-rejection.js';
import { verifierFixture } from '../support/verifier-fixture.js';

const AUDIENCE = 'https://payments.test';
const clock = fakeClock();
let issuer: TestIssuer;
let faulty: FaultyJwks;

beforeAll(async () => {
  issuer = await createTestIssuer({ audience: AUDIENCE, now: clock.now, tenantName: 'Confidential Clinic' });
  faulty = await serveFaultyJwks(issuer);
});

afterAll(() => faulty.close());

const { verifier, log } = verifierFixture(() => ({ registry: [faulty.entry], audience: AUDIENCE, now: clock.now }));

const ofType = <T extends VerifierEvent['type']>(type: T) =>
  log.events.filter((event): event is Extract<VerifierEvent, { type: T }> => event.type === type);

describe('jwks_fetch', () => {
  test('a good download reports issuer, trigger, outcome, duration and key count', async () => {
    await verifier().verify(await issuer.token());
    expect(ofType('jwks_fetch')).toEqual([
      {
        type: 'jwks_fetch',
        issuer: issuer.issuer,
        trigger: 'initial',
        outcome: 'ok',
        durationMs: expect.any(Number),
        keys: 1,
        ignoredKeys: 0,
      },
    ]);
    expect(ofType('jwks_fetch')[0]?.durationMs).toBeGreaterThanOrEqual(0);
  });

  test('a failed download reports the reason and the HTTP status', async () => {
    await faulty.setFault('status_500');
    try {
      await authRejection(verifier().verify(await issuer.token()));
    } finally {
      await faulty.setFault('none');
    }
    expect(ofType('jwks_fetch')).toEqual([
      {
        type: 'jwks_fetch',
        issuer: issuer.issuer,
        trigger: 'initial',
        outcome: 'error',
        durationMs: expect.any(Number),
        reason: 'status',
        status: 500,
      },
    ]);
  });

  test.each([
    ['refresh', (v: Verifier) => v.refresh(issuer.issuer)],
    ['warm_up', (v: Verifier) => v.warmUp()],
  ])('a %s download says what caused it', async (trigger, load) => {
    await load(verifier());
    expect(ofType('jwks_fetch').map((event) => event.trigger)).toEqual([trigger]);
  });
});

describe('verify_success', () => {
  test('reports the issuer, the key, whether the result cache answered, and the duration', async () => {
    const v = verifier({ cacheAdmission: 'first-use' });
    const token = await issuer.token();
    await v.verify(token);
    await v.verify(token);
    expect(ofType('verify_success')).toEqual([
      { type: 'verify_success', issuer: issuer.issuer, kid: 'test-key', cached: false, durationMs: expect.any(Number) },
      { type: 'verify_success', issuer: issuer.issuer, kid: 'test-key', cached: true, durationMs: expect.any(Number) },
    ]);
    for (const event of ofType('verify_success')) expect(event.durationMs).toBeGreaterThanOrEqual(0);
  });
});

describe('verify_failure', () => {
  test('reports the code and the issuer once the issuer is known', async () => {
    const v = verifier();
    const [header, payload] = (await issuer.token()).split('.');
    await authRejection(v.verify(`${header}.${payload}.${'A'.repeat(342)}`));
    expect(ofType('verify_failure')).toEqual([
      {
        type: 'verify_failure',
        code: 'invalid_signature',
        issuer: issuer.issuer,
        kid: 'test-key',
        cached: false,
        durationMs: expect.any(Number),
        facts: expect.objectContaining({ rule: 'signature' }),
        hint: expect.stringContaining('"test-key"'),
      },
    ]);
  });

  test('reports a null issuer when the token names none that is registered', async () => {
    const v = verifier();
    await authRejection(v.verify(await issuer.token({ iss: 'https://intruder.test' })));
    expect(ofType('verify_failure')).toEqual([
      {
        type: 'verify_failure',
        code: 'unknown_issuer',
        issuer: null,
        kid: null,
        cached: false,
        durationMs: expect.any(Number),
        facts: expect.objectContaining({ rule: 'iss', actual: 'https://intruder.test' }),
        hint: expect.stringContaining('"https://intruder.test"'),
      },
    ]);
  });

  test('names the claim at fault; only its hint quotes what the client sent', async () => {
    const v = verifier();
    await authRejection(v.verify(await issuer.token({ aud: 'https://elsewhere.test' })));
    expect(ofType('verify_failure')).toEqual([
      {
        type: 'verify_failure',
        code: 'audience_mismatch',
        issuer: issuer.issuer,
        kid: 'test-key',
        cached: false,
        durationMs: expect.any(Number),
        claim: 'aud',
        facts: expect.objectContaining({ rule: 'aud', actual: 'https://elsewhere.test' }),
        hint: expect.stringContaining('"https://elsewhere.test"'),
      },
    ]);
  });

  test('names no kid the issuer does not publish: an unknown kid is reported as null (a forged kid in metrics)', async () => {
    const v = verifier();
    await authRejection(v.verify(await issuer.token({}, { kid: 'forged-kid' })));
    expect(ofType('verify_failure')).toEqual([expect.objectContaining({ code: 'unknown_key', kid: null })]);
    expect(JSON.stringify({ ...ofType('verify_failure')[0], facts: undefined, hint: undefined })).not.toContain('forged-kid');
  });

  test('says when a cached result failed its re-check', async () => {
    const v = verifier({ cacheAdmission: 'first-use' });
    const token = await issuer.token();
    await v.verify(token);
    v.suspendIssuer(issuer.issuer);
    await authRejection(v.verify(token));
    expect(ofType('verify_failure')).toEqual([expect.objectContaining({ code: 'issuer_suspended', kid: 'test-key', cached: true })]);
  });

  test('reports jwks_unavailable with its issuer', async () => {
    await faulty.setFault('unreachable');
    try {
      await authRejection(verifier().verify(await issuer.token()));
    } finally {
      await faulty.setFault('none');
    }
    expect(ofType('verify_failure')).toEqual([
      {
        type: 'verify_failure',
        code: 'jwks_unavailable',
        issuer: issuer.issuer,
        kid: null,
        cached: false,
        durationMs: expect.any(Number),
        facts: expect.objectContaining({ rule: 'key' }),
        hint: expect.stringContaining(faulty.entry.jwksUri),
      },
    ]);
  });
});

describe('cache', () => {
  test('a token is a miss on its first two verifications (it is cached on the second) and a hit after', async () => {
    const v = verifier();
    const token = await issuer.token();
    await v.verify(token);
    await v.verify(token);
    await v.verify(token);
    expect(ofType('cache').map((event) => event.outcome)).toEqual(['miss', 'miss', 'hit']);
  });

  test('with the result cache off, no cache events are reported', async () => {
    const v = verifier({ cache: false });
    const token = await issuer.token();
    await v.verify(token);
    await v.verify(token);
    expect(ofType('cache')).toEqual([]);
  });
});

describe('the listener', () => {
  test('a listener that throws changes no outcome', async () => {
    const v = createVerifier({
      registry: [faulty.entry],
      audience: AUDIENCE,
      now: clock.now,
      onEvent: () => {
        throw new Error('metrics backend down');
      },
    });
    await expect(v.verify(await issuer.token())).resolves.toMatchObject({ issuer: issuer.issuer });
    expect((await authRejection(v.verify(await issuer.token({ aud: 'https://elsewhere.test' })))).code).toBe('audience_mismatch');
  });

  test('no event carries a token, a key or personal data, and only hints quote what the client sent (secrets and personal data leaking into metrics and logs)', async () => {
    const v = verifier();
    const token = await issuer.token();
    const tokens = [
      token,
      await issuer.token({ aud: 'https://elsewhere.test' }),
      await issuer.token({ tenant_ern: 'ern:other/tenants/t-9' }),
      await issuer.token({}, { kid: 'unknown-kid' }),
      `${token.split('.')[0]}.${token.split('.')[1]}.${'B'.repeat(342)}`,
      `${encodeSegment({ alg: 'none' })}.${token.split('.')[1]}.`,
    ];
    for (const candidate of [...tokens, token]) await v.verify(candidate).catch(() => undefined);
    v.revokeKey(issuer.issuer, 'test-key');
    await v.verify(token).catch(() => undefined);
    await v.refresh(issuer.issuer);

    const text = JSON.stringify(log.events);
    const withoutHints = JSON.stringify(log.events.map((event) => ({ ...event, facts: undefined, hint: undefined })));
    expect(new Set(log.events.map((event) => event.type))).toEqual(
      new Set(['cache', 'jwks_fetch', 'verify_success', 'verify_failure', 'keys_removed']),
    );
    // The audience the client sent is in the audience_mismatch facts and hint, and nowhere else.
    expect(text).toContain('https://elsewhere.test');
    expect(withoutHints).not.toContain('https://elsewhere.test');
    for (const candidate of tokens) {
      for (const segment of candidate.split('.').filter((part) => part.length > 8)) expect(text).not.toContain(segment);
    }
    const jwk = issuer.jwks.keys[0] as { n: string; e: string };
    expect(text).not.toContain(jwk.n);
    expect(text).not.toContain(jwk.n.slice(0, 32));
    for (const value of ['Confidential Clinic', issuer.tenant, 'ern:other/tenants/t-9', 'pay:processPayments']) {
      expect(text).not.toContain(value);
    }
  });
});
