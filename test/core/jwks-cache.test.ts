/**
 * The key source (its rules, defaults, caching and rotation) through the verifier, against a real JWKS endpoint on
 * 127.0.0.1, on a fake clock (the verifier's `now` drives max-age, cooldown, back-off and the stale
 * window; network timeouts are real time).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest';
import { type FetchLike, createVerifier, toErrorResponse } from '../../src/index.js';
import { type TestIssuer, type TestKey, createTestIssuer, encodeSegment } from '../../src/testing/index.js';
import { fakeClock } from '../support/jwks-clock.js';
import { type FaultyJwks, refusedUrl, serveFaultyJwks } from '../support/jwks-fault-server.js';
import { authRejection } from '../support/jwks-rejection.js';
import { PATIENCE_MS } from '../support/loaded-machine.js';
import { verifyUntilCached } from '../support/result-cache.js';
import { verifierFixture } from '../support/verifier-fixture.js';

const AUDIENCE = 'https://payments.test';
const MAX_AGE = 600;
const COOLDOWN = 30;
const STALE_WINDOW = 86_400;

const clock = fakeClock();
let issuer: TestIssuer;
/** A second key of the issuer, published only by the tests that need it. */
let second: TestKey;
let faulty: FaultyJwks;

beforeAll(async () => {
  issuer = await createTestIssuer({ audience: AUDIENCE, now: clock.now });
  second = await issuer.addKey({ kid: 'second', publish: false });
  faulty = await serveFaultyJwks(issuer);
});

afterAll(() => faulty.close());

beforeEach(async () => {
  clock.advance(3600);
  await faulty.setFault('none');
  faulty.reset();
});

afterEach(() => issuer.unpublish(second.kid));

const { verifier, log } = verifierFixture(() => ({ registry: [faulty.entry], audience: AUDIENCE, now: clock.now }));

/** A token naming `kid`, with a signature that is never checked: the key lookup fails first. */
function naming(kid: string): string {
  return `${encodeSegment({ alg: 'RS256', typ: 'JWT', kid })}.${encodeSegment(issuer.claims())}.c2ln`;
}

/** Resolves once `condition()` holds (polled in real time, for events on the server side), up to PATIENCE_MS. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + PATIENCE_MS;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${PATIENCE_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const triggers = () => log.fetches().map((event) => `${event.trigger}:${event.outcome}`);

describe('max-age (default 10 min)', () => {
  test('keys are reused within the max-age: no second download', async () => {
    const v = verifier();
    await v.verify(await issuer.token());
    clock.advance(MAX_AGE - 1);
    await v.verify(await issuer.token());
    expect(faulty.requests).toBe(1);
  });

  test('past the max-age the held keys verify at once while the reload runs in the background', async () => {
    const v = verifier();
    await v.verify(await issuer.token());
    clock.advance(MAX_AGE);
    const release = faulty.hold();
    const reloaded = log.nextFetch();
    try {
      await expect(v.verify(await issuer.token())).resolves.toMatchObject({ issuer: issuer.issuer });
      await until(() => faulty.requests === 2);
      expect(log.fetches()).toHaveLength(1);
    } finally {
      release();
    }
    expect(await reloaded).toMatchObject({ trigger: 'max_age', outcome: 'ok' });
  });

  test('a key removed from the JWKS stops verifying once the reload completes, cached results included', async () => {
    issuer.publish(second.publicJwk);
    const v = verifier();
    const cached = await issuer.token({}, undefined, { key: second });
    await verifyUntilCached(v, cached);
    issuer.unpublish(second.kid);
    clock.advance(MAX_AGE);
    const reloaded = log.nextFetch();
    await v.verify(await issuer.token({}, undefined, { key: second }));
    await reloaded;
    const fresh = await authRejection(v.verify(await issuer.token({ jti: 'after' }, undefined, { key: second })));
    const fromCache = await authRejection(v.verify(cached));
    expect([fresh.code, fresh.status, fromCache.code]).toEqual(['unknown_key', 401, 'unknown_key']);
    await expect(v.verify(await issuer.token())).resolves.toBeDefined();
  });

  test('a key removed from the JWKS stops verifying after the max-age even when every verification is a cache hit (a reused token does not hold the keys back)', async () => {
    issuer.publish(second.publicJwk);
    const v = verifier();
    const iat = Math.floor(clock.now() / 1000);
    const cached = await issuer.token({ iat, expt: iat + 2 * MAX_AGE }, undefined, { key: second });
    await verifyUntilCached(v, cached);
    issuer.unpublish(second.kid);
    clock.advance(MAX_AGE);
    const reloaded = log.nextFetch();
    await v.verify(cached);
    expect(await reloaded).toMatchObject({ trigger: 'max_age', outcome: 'ok' });
    expect((await authRejection(v.verify(cached))).code).toBe('unknown_key');
  });

  test('keys idle past max-age plus the stale window are not used: the verification waits for a download (a key removed while the gateway was idle cannot come back)', async () => {
    const v = verifier();
    await v.verify(await issuer.token());
    clock.advance(MAX_AGE + STALE_WINDOW);
    const release = faulty.hold();
    let settled = false;
    try {
      const verification = v.verify(await issuer.token());
      void verification.then(
        () => (settled = true),
        () => (settled = true),
      );
      await until(() => faulty.requests === 2);
      expect(settled).toBe(false);
      release();
      await expect(verification).resolves.toBeDefined();
    } finally {
      release();
    }
    expect(faulty.requests).toBe(2);
  });
});

describe('unknown kid: one refetch, then a cooldown (default 30 s)', () => {
  test('a key published after the load verifies after exactly one refetch', async () => {
    const v = verifier();
    await v.verify(await issuer.token());
    issuer.publish(second.publicJwk);
    await expect(v.verify(await issuer.token({}, undefined, { key: second }))).resolves.toBeDefined();
    expect(faulty.requests).toBe(2);
    expect(triggers()).toEqual(['initial:ok', 'kid_miss:ok']);
  });

  test('a kid still unknown after the refetch is unknown_key, 401', async () => {
    const v = verifier();
    await v.verify(await issuer.token());
    const error = await authRejection(v.verify(naming('nobody')));
    expect([error.code, error.status, error.error]).toEqual(['unknown_key', 401, 'invalid_token']);
    expect(faulty.requests).toBe(2);
  });

  test('within the cooldown another unknown kid is unknown_key without a download', async () => {
    const v = verifier();
    await v.verify(await issuer.token());
    await authRejection(v.verify(naming('first')));
    clock.advance(COOLDOWN - 1);
    const error = await authRejection(v.verify(naming('second-miss')));
    expect(error.code).toBe('unknown_key');
    expect(faulty.requests).toBe(2);
  });

  test('once the cooldown has passed, an unknown kid refetches again', async () => {
    const v = verifier();
    await v.verify(await issuer.token());
    await authRejection(v.verify(naming('first')));
    clock.advance(COOLDOWN);
    await authRejection(v.verify(naming('again')));
    expect(faulty.requests).toBe(3);
  });

  test('the first unknown kid right after a load refetches (the cooldown does not count from loads)', async () => {
    const v = verifier();
    await v.verify(await issuer.token());
    clock.advance(1);
    await authRejection(v.verify(naming('fresh-miss')));
    expect(triggers()).toEqual(['initial:ok', 'kid_miss:ok']);
  });

  test('an unknown kid on a cold cache is answered by the first load, without a second download', async () => {
    const v = verifier();
    await authRejection(v.verify(naming('cold-miss')));
    expect(triggers()).toEqual(['initial:ok']);
  });

  test('a scheduled reload does not restart the cooldown', async () => {
    const v = verifier();
    await v.verify(await issuer.token());
    await authRejection(v.verify(naming('early-miss')));
    clock.advance(MAX_AGE);
    const reloaded = log.nextFetch();
    await v.verify(await issuer.token());
    await reloaded;
    clock.advance(1);
    await authRejection(v.verify(naming('late-miss')));
    expect(triggers()).toEqual(['initial:ok', 'kid_miss:ok', 'max_age:ok', 'kid_miss:ok']);
  });

  test('a flood of distinct unknown kids makes exactly one download per cooldown, counted at the server (no JWKS amplification)', async () => {
    const v = verifier();
    await v.verify(await issuer.token());
    const flood = async (tag: string) => {
      const errors = await Promise.all(Array.from({ length: 100 }, (_, i) => authRejection(v.verify(naming(`${tag}-${i}`)))));
      expect(new Set(errors.map((error) => error.code))).toEqual(new Set(['unknown_key']));
    };
    await flood('a');
    expect(faulty.requests).toBe(2);
    clock.advance(COOLDOWN - 1);
    await flood('b');
    expect(faulty.requests).toBe(2);
    clock.advance(1);
    await flood('c');
    expect(faulty.requests).toBe(3);
    expect(faulty.maxActive).toBe(1);
  });
});

describe('concurrent misses share one download', () => {
  test('200 concurrent verifications on a cold cache make exactly one JWKS request, and all succeed', async () => {
    const v = verifier();
    const tokens = await Promise.all(Array.from({ length: 200 }, (_, i) => issuer.token({ jti: `t-${i}` })));
    const results = await Promise.all(tokens.map((token) => v.verify(token)));
    expect(results.every((auth) => auth.issuer === issuer.issuer)).toBe(true);
    expect(faulty.requests).toBe(1);
  });
});

describe('failures', () => {
  test('JWKS unreachable and no keys cached: jwks_unavailable, answered 503 with Retry-After', async () => {
    const v = createVerifier({
      registry: [{ ...faulty.entry, jwksUri: await refusedUrl() }],
      audience: AUDIENCE,
      now: clock.now,
    });
    const error = await authRejection(v.verify(await issuer.token()));
    const response = toErrorResponse(error);
    expect([error.code, response.status]).toEqual(['jwks_unavailable', 503]);
    expect(response.headers['retry-after']).toBe('1');
    expect(response.headers).not.toHaveProperty('www-authenticate');
    expect(response.body.code).toBe('jwks_unavailable');
  });

  test('a failed reload keeps serving the last good keys until max-age plus the stale window, then they stop', async () => {
    const v = verifier();
    await v.verify(await issuer.token());
    await faulty.setFault('status_500');
    clock.advance(MAX_AGE);
    const failed = log.nextFetch();
    await expect(v.verify(await issuer.token())).resolves.toBeDefined();
    await failed;
    clock.advance(STALE_WINDOW - 1);
    const failedAgain = log.nextFetch();
    await expect(v.verify(await issuer.token())).resolves.toBeDefined();
    await failedAgain;
    clock.advance(1);
    const error = await authRejection(v.verify(await issuer.token()));
    expect([error.code, error.status]).toEqual(['jwks_unavailable', 503]);
    expect(log.events).toContainEqual({
      type: 'keys_removed',
      issuer: issuer.issuer,
      kids: ['test-key'],
      cause: 'expired',
    });
  });

  test('a good reload after failures ends the stale period: the new set is fresh again', async () => {
    const v = verifier();
    await v.verify(await issuer.token());
    await faulty.setFault('status_500');
    clock.advance(MAX_AGE);
    const failed = log.nextFetch();
    await v.verify(await issuer.token());
    expect((await failed).outcome).toBe('error');
    await faulty.setFault('none');
    clock.advance(60);
    const recovered = log.nextFetch();
    await v.verify(await issuer.token());
    expect((await recovered).outcome).toBe('ok');
    clock.advance(STALE_WINDOW);
    const reloaded = log.nextFetch();
    await expect(v.verify(await issuer.token())).resolves.toBeDefined();
    await reloaded;
  });

  test('failed downloads back off 1 s, 2 s, 4 s: repeated verifications do not storm the endpoint (no fetch storm against a failing issuer)', async () => {
    const v = verifier();
    await faulty.setFault('status_500');
    const attempt = async () => (await authRejection(v.verify(naming('test-key')))).retryAfter;
    expect(await attempt()).toBe(1);
    for (let i = 0; i < 20; i += 1) await attempt();
    expect(faulty.requests).toBe(1);
    clock.advance(1);
    expect(await attempt()).toBe(2);
    expect(faulty.requests).toBe(2);
    clock.advance(1);
    await attempt();
    expect(faulty.requests).toBe(2);
    clock.advance(1);
    expect(await attempt()).toBe(4);
    expect(faulty.requests).toBe(3);
  });

  test('the back-off stops growing at jwksBackoffMax', async () => {
    const v = verifier({ jwksBackoff: 1, jwksBackoffMax: 3 });
    await faulty.setFault('status_500');
    const retryAfters: (number | undefined)[] = [];
    for (const wait of [0, 1, 2, 3, 3]) {
      clock.advance(wait);
      retryAfters.push((await authRejection(v.verify(naming('test-key')))).retryAfter);
    }
    expect(retryAfters).toEqual([1, 2, 3, 3, 3]);
    expect(faulty.requests).toBe(5);
  });

  test('a 429 Retry-After is honoured: no download before it ends, and the 503 says how long is left', async () => {
    const v = verifier();
    await faulty.setFault('status_429');
    expect(toErrorResponse(await authRejection(v.verify(await issuer.token()))).headers['retry-after']).toBe('30');
    clock.advance(29);
    expect(toErrorResponse(await authRejection(v.verify(await issuer.token()))).headers['retry-after']).toBe('1');
    expect(faulty.requests).toBe(1);
    await faulty.setFault('none');
    clock.advance(1);
    await expect(v.verify(await issuer.token())).resolves.toBeDefined();
    expect(faulty.requests).toBe(2);
  });

  test('an endpoint slower than jwksTimeout is a timeout: jwks_unavailable', async () => {
    // An endpoint of its own: on a loaded machine the request given up after 0.2 s may reach its
    // server only later, and must not be counted by the next test.
    const slow = await serveFaultyJwks(issuer, { slowMs: 1500 });
    try {
      const v = verifier({ registry: [slow.entry], jwksTimeout: 0.2 });
      await slow.setFault('slow');
      expect((await authRejection(v.verify(await issuer.token()))).code).toBe('jwks_unavailable');
      expect(log.fetches()).toMatchObject([{ outcome: 'error', reason: 'timeout' }]);
    } finally {
      await slow.close();
    }
  });

  test('an unknown kid while the endpoint is failing is jwks_unavailable, not unknown_key (the key may be new)', async () => {
    const v = verifier();
    await v.verify(await issuer.token());
    await faulty.setFault('status_500');
    const error = await authRejection(v.verify(naming('brand-new')));
    expect([error.code, error.status]).toEqual(['jwks_unavailable', 503]);
    await expect(v.verify(await issuer.token())).resolves.toBeDefined();
    expect(faulty.requests).toBe(2);
  });
});

describe('the JWKS size limit (default 256 KiB)', () => {
  /** A `fetch` serving the issuer's JWKS padded with spaces to `bytes` bytes, streamed (no Content-Length). */
  function servingPadded(bytes: number): FetchLike {
    const bare = JSON.stringify({ keys: issuer.jwks.keys, pad: '' });
    const document = JSON.stringify({ keys: issuer.jwks.keys, pad: ' '.repeat(bytes - bare.length) });
    expect(Buffer.byteLength(document)).toBe(bytes);
    return async () => new Response(document, { status: 200, headers: { 'content-type': 'application/json' } });
  }

  test('a JWKS of exactly 262144 bytes is read and its keys verify', async () => {
    const v = verifier({ fetch: servingPadded(262_144) });
    await expect(v.verify(await issuer.token())).resolves.toBeDefined();
    expect(log.fetches()).toMatchObject([{ outcome: 'ok', keys: 1 }]);
  });

  test('a JWKS of 262145 bytes is a failed download: too_large, jwks_unavailable (attack: memory exhaustion by a huge key set)', async () => {
    const v = verifier({ fetch: servingPadded(262_145) });
    const error = await authRejection(v.verify(await issuer.token()));
    expect([error.code, error.status]).toEqual(['jwks_unavailable', 503]);
    expect(log.fetches()).toMatchObject([{ outcome: 'error', reason: 'too_large' }]);
  });
});

describe('the JWKS time limit (default 5 s)', () => {
  test('every download is bounded by a 5 s abort signal unless jwksTimeout says otherwise (a stalled endpoint cannot hold verifications)', async () => {
    const timeout = vi.spyOn(AbortSignal, 'timeout');
    try {
      await verifier().verify(await issuer.token());
      await verifier({ jwksTimeout: 0.5 }).verify(await issuer.token());
      expect(timeout.mock.calls).toEqual([[5000], [500]]);
    } finally {
      timeout.mockRestore();
    }
  });
});

describe('fetch injection', () => {
  test('an injected fetch makes every download', async () => {
    const calls: string[] = [];
    const counting: FetchLike = (input, init) => {
      calls.push(input);
      return globalThis.fetch(input, init);
    };
    const v = verifier({ fetch: counting });
    await v.verify(await issuer.token());
    expect(calls).toEqual([faulty.url]);
    expect(faulty.requests).toBe(1);
  });
});
