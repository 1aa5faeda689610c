/**
 * The JWKS response's own `Cache-Control` max-age, through the verifier, against a real JWKS
 * endpoint on 127.0.0.1 and a fake clock: honoured within `jwksMaxAgeBounds`, `jwksMaxAge` when
 * there is none usable.
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
  test('a max-age within the bounds replaces jwksMaxAge', async () => {
    cacheControl = 'public, max-age=300';
    await expectFreshFor(verifier(), 300);
  });

  test('a max-age below the lower bound is raised to it', async () => {
    cacheControl = 'max-age=5';
    await expectFreshFor(verifier(), 60);
  });

  test('a max-age above the upper bound is lowered to it', async () => {
    cacheControl = 'max-age=604800';
    await expectFreshFor(verifier({ jwksMaxAgeBounds: { max: 3600 } }), 3600);
  });

  test('no-store means the lower bound', async () => {
    cacheControl = 'no-store';
    await expectFreshFor(verifier({ jwksMaxAgeBounds: { min: 120 } }), 120);
  });

  test('a malformed max-age is ignored: jwksMaxAge applies', async () => {
    cacheControl = 'max-age=12abc';
    await expectFreshFor(verifier({ jwksMaxAge: 900 }), 900);
  });

  test('no Cache-Control: jwksMaxAge applies', async () => {
    await expectFreshFor(verifier({ jwksMaxAge: 900 }), 900);
  });
});

describe('jwksMaxAgeBounds is checked', () => {
  test.each([
    ['not an object', 60],
    ['a bound out of range', { max: 86_401 }],
    ['a negative bound', { min: -1 }],
    ['min above max', { min: 600, max: 300 }],
    ['an unknown member', { minimum: 60 }],
  ])('%s throws a TypeError naming the option', (_case, value) => {
    expect(() => verifier({ jwksMaxAgeBounds: value as VerifierOptions['jwksMaxAgeBounds'] })).toThrow(
      expect.objectContaining({ name: 'TypeError', message: expect.stringContaining('jwksMaxAgeBounds') }),
    );
  });
});
