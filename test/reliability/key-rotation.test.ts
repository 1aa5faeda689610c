/**
 * Key rotation as the gateway's contract describes it, on a fake clock shared by the
 * issuer and the verifier: ten simulated days, a new key every 48 h, published 1 h before it signs,
 * the old key removed once its tokens have expired. With the default cache settings no valid token
 * is ever rejected, and the JWKS downloads stay bounded. (The timeline's JWKS endpoint is an
 * injected in-memory `fetch`, so that ten days of traffic take no real time; the compromise runs
 * against a real endpoint on 127.0.0.1.) Then a compromise: `refresh()` after the key is removed
 * makes its tokens fail at once, cached results included.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type FetchLike, type Verifier, createVerifier } from '../../src/index.js';
import { type TestIssuer, type TestKey, createTestIssuer, generateTestKey } from '../../src/testing/index.js';
import { fakeClock } from '../support/jwks-clock.js';
import { type EventLog, eventLog } from '../support/jwks-events.js';
import { authRejection } from '../support/jwks-rejection.js';
import { verifyUntilCached } from '../support/result-cache.js';

const AUDIENCE = 'https://payments.test';
const HOUR = 3600;
const DAY = 24 * HOUR;
const SIMULATED = 10 * DAY;
const ROTATION = 48 * HOUR;
const PUBLISHED_AHEAD = HOUR;
const TOKEN_LIFETIME = HOUR;
/** The old key leaves the JWKS this long after it stopped signing: its last tokens have expired. */
const RETIRED_AFTER = TOKEN_LIFETIME + HOUR;
/** One burst of traffic every 20 simulated minutes. */
const STEP = 20 * 60;
const DEFAULT_MAX_AGE = 600;

describe('ten days of rotation every 48 h, with the default cache settings', () => {
  const clock = fakeClock();
  const start = clock.now();
  let issuer: TestIssuer;
  let nextKeys: TestKey[];
  const rotations = Math.floor(SIMULATED / ROTATION);

  beforeAll(async () => {
    [issuer, ...nextKeys] = (await Promise.all([
      createTestIssuer({ audience: AUDIENCE, now: clock.now, lifetime: TOKEN_LIFETIME, kid: 'key-0' }),
      ...Array.from({ length: rotations }, (_, i) => generateTestKey({ kid: `key-${i + 1}` })),
    ])) as [TestIssuer, ...TestKey[]];
  });

  test('zero valid tokens are rejected, no unknown kid is ever met, and the downloads are bounded', async () => {
    const log = eventLog();
    let started = 0;
    /** The issuer's JWKS endpoint: serves the JWKS as published at the moment of each request. */
    const endpoint: FetchLike = async () => {
      started += 1;
      return Response.json(issuer.jwks);
    };
    const verifier = createVerifier({
      registry: [issuer.entry],
      audience: AUDIENCE,
      now: clock.now,
      onEvent: log.listener,
      fetch: endpoint,
    });
    /** Let each background download finish before simulated time moves on. */
    const settle = async () => {
      while (log.fetches().length < started) await new Promise((resolve) => setImmediate(resolve));
    };
    let signing: TestKey = issuer.signingKey;
    const live: { token: string; expiresAt: number; kid: string }[] = [];
    const rejected: string[] = [];
    let verified = 0;
    let steps = 0;

    for (let elapsed = 0; elapsed <= SIMULATED; elapsed += STEP) {
      clock.advance(elapsed === 0 ? 0 : STEP);
      steps += 1;
      for (let i = 1; i <= rotations; i += 1) {
        const key = nextKeys[i - 1] as TestKey;
        const signsFrom = i * ROTATION;
        if (elapsed === signsFrom - PUBLISHED_AHEAD) issuer.publish(key.publicJwk);
        if (elapsed === signsFrom) signing = key;
        if (elapsed === signsFrom + RETIRED_AFTER) issuer.unpublish(i === 1 ? 'key-0' : `key-${i - 1}`);
      }
      live.push({
        token: await issuer.token({ jti: `t-${elapsed}` }, undefined, { key: signing }),
        expiresAt: clock.now() + TOKEN_LIFETIME * 1000,
        kid: signing.kid,
      });
      for (const { token, expiresAt, kid } of live) {
        if (clock.now() >= expiresAt) continue;
        verified += 1;
        await verifier.verify(token).catch((error: { code?: string }) => {
          rejected.push(`${(clock.now() - start) / 1000}s ${kid}: ${error.code ?? String(error)}`);
        });
      }
      while (live.length > 0 && clock.now() >= (live[0] as { expiresAt: number }).expiresAt) live.shift();
      await settle();
    }

    const fetches = log.fetches();
    console.log(
      `rotation timeline: ${steps} steps over ${SIMULATED / DAY} days, ${rotations} rotations, ${verified} verifications, ` +
        `${started} JWKS fetches (${fetches.filter((event) => event.trigger === 'kid_miss').length} on an unknown kid)`,
    );
    expect(rejected).toEqual([]);
    expect(verified).toBeGreaterThan(steps);
    expect(fetches.filter((event) => event.trigger === 'kid_miss')).toEqual([]);
    expect(fetches.every((event) => event.outcome === 'ok')).toBe(true);
    // At most one download per burst of traffic and per max-age, whatever the number of tokens.
    expect(started).toBe(fetches.length);
    expect(started).toBeLessThanOrEqual(Math.min(steps, Math.ceil(SIMULATED / DEFAULT_MAX_AGE) + 1));
    // The last rotation falls on the last day: its predecessor is still published.
    expect(issuer.jwks.keys.map((jwk) => jwk.kid)).toEqual([`key-${rotations - 1}`, `key-${rotations}`]);
  });
});

describe('a compromised key', () => {
  const clock = fakeClock();
  let issuer: TestIssuer;
  let log: EventLog;
  let verifier: Verifier;

  beforeAll(async () => {
    issuer = await createTestIssuer({ audience: AUDIENCE, now: clock.now, kid: 'leaked' });
    await issuer.listen();
  });

  afterAll(() => issuer.close());

  test('refresh() after the key is removed makes every token of that key fail at once, cached results included', async () => {
    log = eventLog();
    verifier = createVerifier({ registry: [issuer.entry], audience: AUDIENCE, now: clock.now, onEvent: log.listener });
    const leaked = issuer.signingKey;
    const tokens = await Promise.all([1, 2, 3].map((n) => issuer.token({ jti: `before-${n}` })));
    for (const token of tokens) await verifyUntilCached(verifier, token);

    await issuer.rotate({ kid: 'replacement', retire: true });
    clock.advance(1);
    const report = await verifier.refresh(issuer.issuer);

    expect(report).toEqual({ issuer: issuer.issuer, ok: true, keys: 1 });
    expect(log.events).toContainEqual({
      type: 'keys_removed',
      issuer: issuer.issuer,
      kids: [leaked.kid],
      cause: 'jwks',
    });
    const errors = await Promise.all(tokens.map((token) => authRejection(verifier.verify(token))));
    expect(errors.map((error) => `${error.code} ${error.status}`)).toEqual(['unknown_key 401', 'unknown_key 401', 'unknown_key 401']);
    const minted = await authRejection(verifier.verify(await issuer.token({ jti: 'after' }, undefined, { key: leaked })));
    expect(minted.code).toBe('unknown_key');
    await expect(verifier.verify(await issuer.token())).resolves.toMatchObject({ issuer: issuer.issuer });
  });
});
