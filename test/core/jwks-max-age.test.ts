/**
 * The JWKS response's own `Cache-Control` max-age, through the verifier, against a real JWKS
 * endpoint on 127.0.0.1 and a fake clock: honoured within `jwksMaxAgeBounds` (by default it may
 * shorten the cache, never lengthen it past `jwksMaxAge`), `jwksMaxAge` when there is none usable.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { Verifier, VerifierOptions } from '../../src/index.js';
import { type JwksServer, type TestIssuer, createTestIssuer, serveJwks } from '../../src/testing/index.js';
import { fakeClock } from '../support/jwks-clock.js';
import { verifierFixture } from '../support/verifier-fixture.js';

const AUDIENCE = 'https://payments.test';

const clock = fakeClock();
let issuer: TestIssuer;
let server: JwksServer;
/** The `Cache-Control` the server sends; none when `undefined`. */
let cacheControl: string | undefined;

beforeAll(async () => {
  issuer = await createTestIssuer({ audience: AUDIENCE, now: clock.now });
  server = await serveJwks(() => issuer.jwks, {
    respond(request, response) {
      const body = JSON.stringify(issuer.jwks);
      const headers: Record<string, string> = { 'content-type': 'application/jwk-set+json' };
      if (cacheControl !== undefined) headers['cache-control'] = cacheControl;
      response.writeHead(request.url === '/.well-known/jwks.json' ? 200 : 404, headers).end(body);
      return true;
    },
  });
});

afterAll(() => server.close());

beforeEach(() => {
  clock.advance(3600);
  cacheControl = undefined;
});

const { verifier, log } = verifierFixture(() => ({
  registry: [{ ...issuer.entry, jwksUri: server.url }],
  audience: AUDIENCE,
  now: clock.now,
  cache: false,
}));

/**
 * Asserts that the keys a first verification downloads stay fresh for exactly `seconds`: no
 * download one second before, a reload at that moment.
 */
async function expectFreshFor(gateway: Verifier, seconds: number): Promise<void> {
  await gateway.verify(await issuer.token());
  clock.advance(seconds - 1);
  await gateway.verify(await issuer.token());
  expect(log.fetches()).toHaveLength(1);
  clock.advance(1);
  const reload = log.nextFetch();
  await gateway.verify(await issuer.token());
  await expect(reload).resolves.toMatchObject({ trigger: 'max_age', outcome: 'ok' });
}

describe('Cache-Control max-age of the JWKS response', () => {
  test.each([
    ['a max-age within the bounds replaces jwksMaxAge', 'public, max-age=300', {}, 300],
    ['a max-age below the lower bound is raised to it', 'max-age=5', {}, 60],
    ['a max-age above the upper bound is lowered to it', 'max-age=604800', { jwksMaxAgeBounds: { max: 3600 } }, 3600],
    ['a max-age of a day is cached for jwksMaxAge: a withdrawn key stops within 10 min, not 24 h', 'public, max-age=86400', {}, 600],
    ['the server cannot lengthen a jwksMaxAge set by the operator either', 'max-age=86400', { jwksMaxAge: 900 }, 900],
    ['an upper bound above jwksMaxAge lets the server lengthen the cache', 'max-age=86400', { jwksMaxAgeBounds: { max: 86_400 } }, 86_400],
    ['leading zeros count for nothing: max-age=0000000001 is 1 s, raised to the lower bound, not a day', 'max-age=0000000001', {}, 60],
    ['a zero-padded max-age within the bounds is its value', 'max-age=00000000000000000300', {}, 300],
    ['the lower bound defaults to jwksMaxAge when that is under 60 s', 'no-store', { jwksMaxAge: 30 }, 30],
    ['no-store means the lower bound', 'no-store', { jwksMaxAgeBounds: { min: 120 } }, 120],
    ['an upper bound under 60 s alone lowers the default lower bound to it', 'no-store', { jwksMaxAgeBounds: { max: 30 } }, 30],
    ['a malformed max-age is ignored: jwksMaxAge applies', 'max-age=12abc', { jwksMaxAge: 900 }, 900],
    ['no Cache-Control: jwksMaxAge applies', undefined, { jwksMaxAge: 900 }, 900],
  ] as const)('%s', async (_case, served, options: Partial<VerifierOptions>, seconds) => {
    cacheControl = served;
    await expectFreshFor(verifier(options), seconds);
  });
});

describe('jwksMaxAgeBounds is checked', () => {
  test.each([
    ['not an object', 60],
    ['a bound out of range', { max: 86_401 }],
    ['a negative bound', { min: -1 }],
    ['min above max', { min: 600, max: 300 }],
    ['min above the default max (jwksMaxAge, 600)', { min: 900 }],
    ['an unknown member', { minimum: 60 }],
  ])('%s throws a TypeError naming the option', (_case, value) => {
    expect(() => verifier({ jwksMaxAgeBounds: value as VerifierOptions['jwksMaxAgeBounds'] })).toThrow(
      expect.objectContaining({ name: 'TypeError', message: expect.stringContaining('jwksMaxAgeBounds') }),
    );
  });
});

test('a min above the default max names jwksMaxAge as the source of the max', () => {
  expect(() => verifier({ jwksMaxAgeBounds: { min: 900 } })).toThrow(/jwksMaxAgeBounds\.max \(its default, jwksMaxAge\), got 900 > 600/);
});
