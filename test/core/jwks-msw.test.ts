/**
 * The key source and request interception: msw patches `http.request` and `globalThis.fetch`, so
 * the key source must look its transport up on every download (on Node, `node:https`'s
 * `request`, whose connections screen the addresses they reach); an injected `fetch` wins.
 */
import https from 'node:https';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { type FetchLike, type Verifier, createVerifier } from '../../src/index.js';
import { type TestIssuer, createTestIssuer } from '../../src/testing/index.js';
import { jwksHandlers } from '../../src/testing/msw.js';
import { fakeClock } from '../support/jwks-clock.js';
import { authRejection } from '../support/jwks-rejection.js';
import { verifierFixture } from '../support/verifier-fixture.js';

const AUDIENCE = 'https://payments.test';
const clock = fakeClock();
const server = setupServer();
let issuer: TestIssuer;
/** Built before msw starts intercepting: it must still go through msw. */
let early: Verifier;

beforeAll(async () => {
  issuer = await createTestIssuer({ audience: AUDIENCE, now: clock.now });
  early = createVerifier({ registry: [issuer.entry], audience: AUDIENCE, now: clock.now });
  server.use(...jwksHandlers(issuer));
  server.listen({ onUnhandledRequest: 'error' });
});

afterEach(() => {
  server.resetHandlers(...jwksHandlers(issuer));
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

afterAll(() => server.close());

const { verifier, log } = verifierFixture(() => ({ registry: [issuer.entry], audience: AUDIENCE, now: clock.now }));

describe('fetch is looked up per download', () => {
  test('a verifier built before msw started intercepting downloads through msw', async () => {
    const before = issuer.jwksRequests;
    await expect(early.verify(await issuer.token())).resolves.toMatchObject({ issuer: issuer.issuer });
    expect(issuer.jwksRequests).toBe(before + 1);
  });

  test("on Node, node:https's request replaced after the verifier was built is the one called", async () => {
    const v = verifier();
    const request = vi.spyOn(https, 'request');
    await v.verify(await issuer.token());
    expect(request).toHaveBeenCalledTimes(1);
    expect(String(request.mock.calls[0]?.[0])).toBe(issuer.entry.jwksUri);
  });

  test('on Node, the global fetch is not the default: it cannot screen the address it connects to', async () => {
    const v = verifier();
    const replacement = vi.fn<FetchLike>(async () => Response.json(issuer.jwks));
    vi.stubGlobal('fetch', replacement);
    await expect(v.verify(await issuer.token())).resolves.toMatchObject({ issuer: issuer.issuer });
    expect(replacement).not.toHaveBeenCalled();
  });
});

describe('an injected fetch', () => {
  test('is used instead of the global one (msw sees nothing)', async () => {
    const before = issuer.jwksRequests;
    const injected = vi.fn<FetchLike>(async () => Response.json(issuer.jwks));
    await verifier({ fetch: injected }).verify(await issuer.token());
    expect(injected).toHaveBeenCalledTimes(1);
    expect(issuer.jwksRequests).toBe(before);
  });

  test('that throws makes jwks_unavailable, never a crash', async () => {
    const error = await authRejection(verifier({ fetch: () => Promise.reject(new Error('boom')) }).verify(await issuer.token()));
    expect([error.code, error.status]).toEqual(['jwks_unavailable', 503]);
  });

  test('that is not a function is refused when the verifier is built', () => {
    expect(() => createVerifier({ registry: [issuer.entry], audience: AUDIENCE, fetch: 'fetch' as unknown as FetchLike })).toThrow(
      /fetch must be a function/,
    );
  });
});

describe('msw-served failures', () => {
  test('a network error from msw is jwks_unavailable with a network reason', async () => {
    server.use(http.get(issuer.entry.jwksUri, () => HttpResponse.error()));
    const error = await authRejection(verifier().verify(await issuer.token()));
    expect(error.code).toBe('jwks_unavailable');
    expect(log.fetches()).toMatchObject([{ outcome: 'error', reason: 'network' }]);
  });

  test('a 503 with Retry-After from msw is honoured in the answer', async () => {
    server.use(http.get(issuer.entry.jwksUri, () => new HttpResponse(null, { status: 503, headers: { 'retry-after': '12' } })));
    const error = await authRejection(verifier().verify(await issuer.token()));
    expect([error.code, error.retryAfter]).toEqual(['jwks_unavailable', 12]);
  });
});
