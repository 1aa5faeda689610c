import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import {
  type FetchLike,
  type JwksFailureReason,
  JwksFetchError,
  type JwksFetchLimits,
  fetchJwks,
  parseCacheControlMaxAge,
  parseRetryAfter,
} from '../../src/core/jwks-fetch.js';
import { type JwksServer, type TestIssuer, createTestIssuer, serveJwks } from '../../src/testing/index.js';
import { type FaultyJwks, refusedUrl, serveFaultyJwks } from '../support/jwks-fault-server.js';
import { LOADED_MARGIN_MS, PATIENCE_MS } from '../support/loaded-machine.js';

/** A good download on a loaded machine has the margin's time (`timeout` is in seconds); the tests of the limit itself use `quick`. */
const LIMITS: JwksFetchLimits = {
  timeout: LOADED_MARGIN_MS / 1000,
  maxBytes: 16 * 1024,
  maxKeys: 100,
  maxRedirects: 3,
  allowedHosts: new Set<string>(),
};
const NOW = Date.UTC(2030, 0, 1);
const realFetch: FetchLike = (input, init) => globalThis.fetch(input, init);

let issuer: TestIssuer;
let faulty: FaultyJwks;
/** Serves the JWKS, and `/hop/<n>` redirects n + 1 times before reaching it. */
let hops: JwksServer;
let hopBase: string;
let lastAccept: string | undefined;

beforeAll(async () => {
  issuer = await createTestIssuer();
  faulty = await serveFaultyJwks(issuer, { slowMs: 2000 });
  hops = await serveJwks(() => issuer.jwks, {
    respond(request, response) {
      lastAccept = request.headers.accept;
      const hop = /^\/hop\/(\d+)$/.exec(request.url ?? '');
      if (hop === null) return false;
      const left = Number(hop[1]);
      response.writeHead(302, { location: left === 0 ? '/.well-known/jwks.json' : `/hop/${left - 1}` }).end();
      return true;
    },
  });
  hopBase = new URL(hops.url).origin;
});

afterAll(async () => {
  await Promise.all([faulty.close(), hops.close()]);
});

/** The `JwksFetchError` a download fails with. */
async function failure(download: Promise<unknown>): Promise<JwksFetchError> {
  const outcome = await download.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(JwksFetchError);
  return outcome as JwksFetchError;
}

/** A `fetch` that answers every call with `answer(url)` and records the URLs it was asked for. */
function scripted(answer: (url: string) => Response): FetchLike & { readonly urls: string[] } {
  const urls: string[] = [];
  const fetchImpl = async (input: string) => {
    urls.push(input);
    return answer(input);
  };
  return Object.assign(fetchImpl, { urls });
}

/** The real `fetch`, refusing (and recording) any URL off 127.0.0.1: tests never leave loopback. */
function loopbackOnly(): FetchLike & { readonly urls: string[] } {
  const urls: string[] = [];
  const fetchImpl: FetchLike = async (input, init) => {
    urls.push(input);
    if (new URL(input).hostname !== '127.0.0.1') throw new TypeError(`refused to leave loopback: ${input}`);
    return globalThis.fetch(input, init);
  };
  return Object.assign(fetchImpl, { urls });
}

const JSON_TYPE = { 'content-type': 'application/json' } as const;
/** A JWKS document with no keys, padded with spaces to `bytes` bytes. */
function paddedDocument(bytes: number): string {
  const padded = JSON.stringify({ keys: [], pad: ' '.repeat(bytes - JSON.stringify({ keys: [], pad: '' }).length) });
  expect(padded.length).toBe(bytes);
  return padded;
}

const redirect = (location: string) => new Response(null, { status: 302, headers: { location } });

describe('a good download', () => {
  test('returns the keys array of a 200 JSON JWKS', async () => {
    const { keys } = await fetchJwks(hops.url, realFetch, LIMITS, NOW);
    expect(keys).toEqual(issuer.jwks.keys);
  });

  test('asks for a JWK set in Accept', async () => {
    await fetchJwks(hops.url, realFetch, LIMITS, NOW);
    expect(lastAccept).toBe('application/jwk-set+json, application/json');
  });

  test('calls the injected fetch with redirect "manual" and an abort signal', async () => {
    const inits: RequestInit[] = [];
    await fetchJwks(
      hops.url,
      (input, init) => {
        inits.push(init);
        return realFetch(input, init);
      },
      LIMITS,
      NOW,
    );
    expect(inits).toHaveLength(1);
    expect(inits[0]?.redirect).toBe('manual');
    expect(inits[0]?.signal).toBeInstanceOf(AbortSignal);
  });
});

describe('redirects: none followed by default, and never off the origin', () => {
  test('a redirect is a failed download, named as such, by default (as jose follows none)', async () => {
    const fetchImpl = loopbackOnly();
    const error = await failure(fetchJwks(`${hopBase}/hop/0`, fetchImpl, { ...LIMITS, maxRedirects: 0 }, NOW));
    expect(error.reason).toBe('redirects');
    expect(error.status).toBe(302);
    expect(fetchImpl.urls).toHaveLength(1);
  });

  test('follows same-origin redirects up to the limit, relative Locations included', async () => {
    const fetchImpl = loopbackOnly();
    await expect(fetchJwks(`${hopBase}/hop/2`, fetchImpl, LIMITS, NOW)).resolves.toMatchObject({ keys: issuer.jwks.keys });
    expect(fetchImpl.urls).toHaveLength(4);
  });

  test('fails on one redirect more than the limit without following it', async () => {
    const fetchImpl = loopbackOnly();
    const error = await failure(fetchJwks(`${hopBase}/hop/3`, fetchImpl, LIMITS, NOW));
    expect(error.reason).toBe('redirects');
    expect(fetchImpl.urls).toHaveLength(4);
  });

  test('a redirect loop fails after the limit (no endless download)', async () => {
    await faulty.setFault('redirect_loop');
    faulty.reset();
    const error = await failure(fetchJwks(faulty.url, realFetch, LIMITS, NOW));
    expect(error.reason).toBe('redirects');
    expect(faulty.requests).toBe(4);
    await faulty.setFault('none');
  });

  test.each([
    ['another https host', 'https://cdn.example/jwks.json'],
    ['0.0.0.0, which reaches loopback', 'https://0.0.0.0/jwks.json'],
    ['an IPv4-mapped loopback address', 'https://[::ffff:127.0.0.1]/jwks.json'],
    ['localhost', 'https://localhost/admin'],
    ['a link-local metadata address', 'https://169.254.169.254/latest/meta-data/'],
    ['a private range', 'https://10.0.0.7/jwks.json'],
    ['another port of the same host', 'https://issuer.example:8443/jwks.json'],
    ['http: on the same host (a downgrade)', 'http://issuer.example/jwks.json'],
    ['a URL carrying credentials', 'https://user:secret@issuer.example/jwks.json'],
  ])('refuses a redirect to %s, without fetching it, even when redirects are allowed', async (_name, location) => {
    const fetchImpl = scripted(() => redirect(location));
    const error = await failure(fetchJwks('https://issuer.example/jwks.json', fetchImpl, LIMITS, NOW));
    expect(error.reason).toBe('redirect_target');
    expect(fetchImpl.urls).toEqual(['https://issuer.example/jwks.json']);
  });

  test('a redirect refused as off-origin names the Location found and the origin expected', async () => {
    const fetchImpl = scripted(() => redirect('https://cdn.example/jwks.json'));
    const error = await failure(fetchJwks('https://issuer.example/jwks.json', fetchImpl, LIMITS, NOW));
    expect(error.message).toContain('"https://cdn.example/jwks.json"');
    expect(error.message).toContain('"https://issuer.example"');
    expect(error.message).toContain('jwksUri');
  });

  test('a redirect not followed names where it leads, and what to change', async () => {
    const fetchImpl = scripted(() => redirect('/v2/jwks.json'));
    const error = await failure(fetchJwks('https://issuer.example/jwks.json', fetchImpl, { ...LIMITS, maxRedirects: 0 }, NOW));
    expect(error.message).toContain('"https://issuer.example/v2/jwks.json"');
    expect(error.message).toContain('jwksMaxRedirects is 0');
    expect(error.message).toContain('jwksUri');
  });

  test("a Location quoted in a message is cut and escaped: it is the endpoint's text", async () => {
    const fetchImpl = scripted(() => redirect(`https://cdn.example/\u009b2J${'x'.repeat(500)}`));
    const error = await failure(fetchJwks('https://issuer.example/jwks.json', fetchImpl, LIMITS, NOW));
    expect(error.message).not.toContain('\u009b');
    expect(error.message).not.toContain('x'.repeat(200));
  });

  test('refuses a redirect without a Location', async () => {
    const fetchImpl = scripted(() => new Response(null, { status: 307 }));
    const error = await failure(fetchJwks('https://issuer.example/jwks.json', fetchImpl, LIMITS, NOW));
    expect(error.reason).toBe('redirect_target');
  });

  test('follows a redirect to another path of the same https origin when allowed', async () => {
    const fetchImpl = scripted((url) => (url.endsWith('/old.json') ? redirect('/jwks.json') : Response.json({ keys: [] })));
    await expect(fetchJwks('https://issuer.example/old.json', fetchImpl, LIMITS, NOW)).resolves.toMatchObject({ keys: [] });
    expect(fetchImpl.urls).toEqual(['https://issuer.example/old.json', 'https://issuer.example/jwks.json']);
  });
});

describe('the content type', () => {
  test.each(['application/json', 'application/jwk-set+json', 'Application/JSON; charset=utf-8'])('%s is read', async (type) => {
    const fetchImpl = scripted(() => new Response('{"keys":[]}', { status: 200, headers: { 'content-type': type } }));
    await expect(fetchJwks('https://issuer.example/jwks.json', fetchImpl, LIMITS, NOW)).resolves.toMatchObject({ keys: [] });
  });

  test.each(['text/html', 'text/plain;charset=UTF-8', 'application/jsonx', ''])(
    '%j is a failed download (a page, not a key set)',
    async (type) => {
      const headers: Record<string, string> = type === '' ? {} : { 'content-type': type };
      const body = new Blob(['{"keys":[]}']).stream();
      const fetchImpl = scripted(() => new Response(body, { status: 200, headers }));
      expect((await failure(fetchJwks('https://issuer.example/jwks.json', fetchImpl, LIMITS, NOW))).reason).toBe('content_type');
    },
  );

  test('a content_type failure names the type served, escaped, and the types read', async () => {
    const fetchImpl = scripted(() => new Response('{"keys":[]}', { status: 200, headers: { 'content-type': 'text/html\u009b2J' } }));
    const error = await failure(fetchJwks('https://issuer.example/jwks.json', fetchImpl, LIMITS, NOW));
    expect(error.message).toContain('"text/html\\u009b2J"');
    expect(error.message).not.toContain('\u009b');
    expect(error.message).toContain('application/jwk-set+json');
  });

  test('a content_type failure without a Content-Type says none was sent', async () => {
    const fetchImpl = scripted(() => {
      // A text body's Content-Type taken off again: no stream body, whose type depends on which
      // Response and ReadableStream classes a shared test worker holds.
      const response = new Response('{"keys":[]}', { status: 200 });
      response.headers.delete('content-type');
      return response;
    });
    const error = await failure(fetchJwks('https://issuer.example/jwks.json', fetchImpl, LIMITS, NOW));
    expect(error.message).toContain('no Content-Type');
  });
});

describe('answers that are failed downloads', () => {
  test.each([404, 500, 204, 201, 304])('status %i is a failure carrying the status', async (status) => {
    const fetchImpl = scripted(() => new Response(status === 204 || status === 304 ? null : '{"keys":[]}', { status }));
    const error = await failure(fetchJwks('https://issuer.example/jwks.json', fetchImpl, LIMITS, NOW));
    expect(error.reason).toBe('status');
    expect(error.status).toBe(status);
  });

  test('a 500 from the real server is a status failure', async () => {
    await faulty.setFault('status_500');
    const error = await failure(fetchJwks(faulty.url, realFetch, LIMITS, NOW));
    expect([error.reason, error.status]).toEqual(['status', 500]);
    await faulty.setFault('none');
  });

  test.each([404, 500, 403])('a %i ignores its Retry-After (only 429 and 503 say when to come back)', async (status) => {
    const fetchImpl = scripted(() => new Response(null, { status, headers: { 'retry-after': '3600' } }));
    const error = await failure(fetchJwks('https://issuer.example/jwks.json', fetchImpl, LIMITS, NOW));
    expect([error.reason, error.status, error.retryAfter]).toEqual(['status', status, undefined]);
  });

  test('a 503 carries its Retry-After in seconds', async () => {
    const fetchImpl = scripted(() => new Response(null, { status: 503, headers: { 'retry-after': '120' } }));
    const error = await failure(fetchJwks('https://issuer.example/jwks.json', fetchImpl, LIMITS, NOW));
    expect([error.reason, error.status, error.retryAfter]).toEqual(['status', 503, 120]);
  });

  test('a 429 carries its Retry-After in seconds', async () => {
    await faulty.setFault('status_429');
    const error = await failure(fetchJwks(faulty.url, realFetch, LIMITS, NOW));
    expect([error.reason, error.status, error.retryAfter]).toEqual(['status', 429, 30]);
    await faulty.setFault('none');
  });

  test('a body that is not JSON is invalid_json', async () => {
    await faulty.setFault('invalid_json');
    expect((await failure(fetchJwks(faulty.url, realFetch, LIMITS, NOW))).reason).toBe('invalid_json');
    await faulty.setFault('none');
  });

  test.each([
    ['a key that repeats "n"', '{"keys":[{"kty":"RSA","kid":"k-1","n":"AQAB","n":"AQAC","e":"AQAB"}]}', 'keys[0].n'],
    ['a document that repeats "keys"', '{"keys":[],"keys":[{"kty":"RSA"}]}', 'keys'],
  ])('JSON with %s is invalid_json naming the member (attack: two readers, two keys)', async (_name, body, path) => {
    const fetchImpl = scripted(() => new Response(body, { status: 200, headers: JSON_TYPE }));
    const error = await failure(fetchJwks('https://issuer.example/jwks.json', fetchImpl, LIMITS, NOW));
    expect(error.reason).toBe('invalid_json');
    expect(error.message).toContain(`repeats the member ${path};`);
  });

  test.each([
    ['an object without keys', '{"kids":[]}'],
    ['an array', '[]'],
    ['null', 'null'],
    ['keys that are an object', '{"keys":{}}'],
    ['keys that are a string', '{"keys":"k-1"}'],
  ])('JSON that is %s is no_keys', async (_name, body) => {
    const fetchImpl = scripted(() => new Response(body, { status: 200, headers: JSON_TYPE }));
    expect((await failure(fetchJwks('https://issuer.example/jwks.json', fetchImpl, LIMITS, NOW))).reason).toBe('no_keys');
  });

  test('an empty keys array is a good download (no usable key, but not a failure)', async () => {
    const fetchImpl = scripted(() => Response.json({ keys: [] }));
    await expect(fetchJwks('https://issuer.example/jwks.json', fetchImpl, LIMITS, NOW)).resolves.toMatchObject({ keys: [] });
  });

  test('a connection reset mid-body is a network failure', async () => {
    await faulty.setFault('reset_mid_body');
    expect((await failure(fetchJwks(faulty.url, realFetch, LIMITS, NOW))).reason).toBe('network');
    await faulty.setFault('none');
  });

  test('a port that refuses connections is a network failure', async () => {
    expect((await failure(fetchJwks(await refusedUrl(), realFetch, LIMITS, NOW))).reason).toBe('network');
  });

  test('a fetch that throws is a network failure, with the cause kept', async () => {
    const cause = new TypeError('no route');
    const error = await failure(fetchJwks('https://issuer.example/jwks.json', () => Promise.reject(cause), LIMITS, NOW));
    expect([error.reason, error.cause]).toEqual(['network', cause]);
  });
});

describe("each failure names what was found and what to do (the endpoint's text quoted and escaped)", () => {
  const download = (response: () => Response) => failure(fetchJwks('https://issuer.example/jwks.json', scripted(response), LIMITS, NOW));

  test('too_large from a Content-Length names the limit, the length declared and the option', async () => {
    const body = JSON.stringify({ keys: [], padding: 'x'.repeat(LIMITS.maxBytes) });
    const error = await download(() => new Response(body, { headers: { ...JSON_TYPE, 'content-length': String(body.length) } }));
    expect(error.reason).toBe('too_large');
    expect(error.message).toContain(`larger than ${LIMITS.maxBytes} bytes`);
    expect(error.message).toContain(`got a Content-Length of ${body.length}`);
    expect(error.message).toContain('raise jwksMaxBytes');
  });

  test('too_large from a streamed body names the bytes read when reading stopped', async () => {
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new Uint8Array(1024).fill(0x20));
      },
    });
    const error = await download(() => new Response(body, { headers: JSON_TYPE }));
    expect(error.reason).toBe('too_large');
    expect(error.message).toContain(`reading stopped at ${LIMITS.maxBytes + 1024} bytes`);
  });

  test('invalid_json quotes the start of the body, escaped (a page served in place of the key set)', async () => {
    const error = await download(() => new Response('<html>\u202e\n<body>', { headers: JSON_TYPE }));
    expect(error.reason).toBe('invalid_json');
    expect(error.message).toContain('got "<html>\\u202e\\u000a<body>"');
  });

  test('invalid_json names an empty body as such', async () => {
    const error = await download(() => new Response('', { headers: JSON_TYPE }));
    expect([error.reason, error.message.includes('got an empty body')]).toEqual(['invalid_json', true]);
  });

  test.each([
    ['[]', 'got an array'],
    ['{"kty":"RSA"}', 'got an object whose "keys" is missing'],
    ['{"keys":{}}', 'got an object whose "keys" is an object'],
  ])('no_keys for %s names what was found: %s', async (body, found) => {
    const error = await download(() => new Response(body, { headers: JSON_TYPE }));
    expect([error.reason, error.message.includes(found)]).toEqual(['no_keys', true]);
  });

  test.each([
    [404, 'is the jwksUri the URL'],
    [503, 'tried again after the back-off'],
  ])('status %i names the status, the 200 expected and what to check', async (status, next) => {
    const error = await download(() => new Response(null, { status }));
    expect(error.reason).toBe('status');
    expect(error.message).toContain(`answered ${status}, not 200`);
    expect(error.message).toContain(next);
  });
});

describe('the size limit (256 KiB by default) stops reading', () => {
  test('a declared Content-Length over the limit fails before the body is read', async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new Uint8Array(1024));
      },
    });
    const fetchImpl = scripted(
      () => new Response(body, { status: 200, headers: { ...JSON_TYPE, 'content-length': String(LIMITS.maxBytes + 1) } }),
    );
    const error = await failure(fetchJwks('https://issuer.example/jwks.json', fetchImpl, LIMITS, NOW));
    expect(error.reason).toBe('too_large');
    expect(pulled).toBeLessThanOrEqual(1);
  });

  test('an endless streamed body is read only up to the limit, then cancelled (memory exhaustion)', async () => {
    let delivered = 0;
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          delivered += 4096;
          controller.enqueue(new Uint8Array(4096).fill(0x20));
        },
        cancel() {
          cancelled = true;
        },
      },
      { highWaterMark: 0 },
    );
    const fetchImpl = scripted(() => new Response(body, { status: 200, headers: JSON_TYPE }));
    const error = await failure(fetchJwks('https://issuer.example/jwks.json', fetchImpl, LIMITS, NOW));
    expect(error.reason).toBe('too_large');
    expect(cancelled).toBe(true);
    expect(delivered).toBeLessThanOrEqual(LIMITS.maxBytes + 2 * 4096);
  });

  test('an endless body from the real server fails as too_large and the connection is closed by the reader', async () => {
    await faulty.setFault('oversized');
    faulty.reset();
    const error = await failure(fetchJwks(faulty.url, realFetch, LIMITS, NOW));
    expect(error.reason).toBe('too_large');
    await faulty.idle();
    expect(faulty.abandonedStreams).toBe(1);
    expect(faulty.streamedBytes).toBeLessThan(64 * 1024 * 1024);
    await faulty.setFault('none');
  });

  test('a body exactly at the limit is read', async () => {
    const document = JSON.stringify({ keys: [], pad: '' });
    const padded = JSON.stringify({ keys: [], pad: ' '.repeat(LIMITS.maxBytes - document.length) });
    expect(padded.length).toBe(LIMITS.maxBytes);
    const fetchImpl = scripted(() => new Response(padded, { status: 200, headers: JSON_TYPE }));
    await expect(fetchJwks('https://issuer.example/jwks.json', fetchImpl, LIMITS, NOW)).resolves.toMatchObject({ keys: [] });
  });

  test('a streamed body one byte over the limit, with no Content-Length, is too_large', async () => {
    const padded = paddedDocument(LIMITS.maxBytes + 1);
    const fetchImpl = scripted(() => new Response(padded, { status: 200, headers: JSON_TYPE }));
    // The limit is met while reading, not from a declared length.
    expect(new Response(padded, { headers: JSON_TYPE }).headers.get('content-length')).toBeNull();
    const error = await failure(fetchJwks('https://issuer.example/jwks.json', fetchImpl, LIMITS, NOW));
    expect(error.reason).toBe('too_large');
  });

  test('a declared Content-Length exactly at the limit is read', async () => {
    const padded = paddedDocument(LIMITS.maxBytes);
    const headers = { ...JSON_TYPE, 'content-length': String(LIMITS.maxBytes) };
    const fetchImpl = scripted(() => new Response(padded, { status: 200, headers }));
    await expect(fetchJwks('https://issuer.example/jwks.json', fetchImpl, LIMITS, NOW)).resolves.toMatchObject({ keys: [] });
  });

  test('a declared Content-Length one byte over the limit is too_large', async () => {
    const headers = { ...JSON_TYPE, 'content-length': String(LIMITS.maxBytes + 1) };
    const fetchImpl = scripted(() => new Response('{"keys":[]}', { status: 200, headers }));
    expect((await failure(fetchJwks('https://issuer.example/jwks.json', fetchImpl, LIMITS, NOW))).reason).toBe('too_large');
  });
});

describe('the key count limit (jwksMaxKeys) is checked before any entry is read', () => {
  /** A JWKS whose `keys` array holds `count` copies of `entry`. */
  const listing = (count: number, entry: unknown = {}) =>
    scripted(() => Response.json({ keys: Array.from({ length: count }, () => entry) }));

  test('a keys array of exactly maxKeys entries is read', async () => {
    const document = await fetchJwks('https://issuer.example/jwks.json', listing(LIMITS.maxKeys), LIMITS, NOW);
    expect(document.keys).toHaveLength(LIMITS.maxKeys);
  });

  test('a keys array of maxKeys + 1 entries is too_many_keys', async () => {
    const error = await failure(fetchJwks('https://issuer.example/jwks.json', listing(LIMITS.maxKeys + 1), LIMITS, NOW));
    expect(error.reason).toBe('too_many_keys');
  });

  test('too_many_keys names the count found, the limit and the option to raise', async () => {
    const error = await failure(fetchJwks('https://issuer.example/jwks.json', listing(250), LIMITS, NOW));
    expect(error.message).toContain(`at most ${LIMITS.maxKeys} entries`);
    expect(error.message).toContain('got 250');
    expect(error.message).toContain('raise jwksMaxKeys');
  });

  test('100,000 small entries within the size limit are too_many_keys (attack: a key set that costs the verifier per entry)', async () => {
    const limits = { ...LIMITS, maxBytes: 1024 * 1024 };
    const error = await failure(fetchJwks('https://issuer.example/jwks.json', listing(100_000, 0), limits, NOW));
    expect([error.reason, error.message.includes('got 100000')]).toEqual(['too_many_keys', true]);
  });
});

describe('the time limit covers the whole exchange (real time, not the verifier clock)', () => {
  const quick: JwksFetchLimits = { ...LIMITS, timeout: 0.2 };

  test('a server slower than the limit is a timeout (a stalled endpoint cannot hold verifications)', async () => {
    await faulty.setFault('slow');
    expect((await failure(fetchJwks(faulty.url, realFetch, quick, NOW))).reason).toBe('timeout');
    await faulty.setFault('none');
  });

  test('a body that stalls after the headers is a timeout', async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"keys":['));
      },
    });
    const fetchImpl = scripted(() => new Response(body, { status: 200, headers: JSON_TYPE }));
    expect((await failure(fetchJwks('https://issuer.example/jwks.json', fetchImpl, quick, NOW))).reason).toBe('timeout');
  });

  test('a stalled body from a fetch that ignores its signal is cancelled at the time limit (no connection left open per download)', async () => {
    let cancelled: unknown;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"keys":['));
      },
      cancel(reason) {
        cancelled = reason ?? 'cancelled';
      },
    });
    const fetchImpl = scripted(() => new Response(body, { status: 200, headers: JSON_TYPE }));
    expect((await failure(fetchJwks('https://issuer.example/jwks.json', fetchImpl, quick, NOW))).reason).toBe('timeout');
    await vi.waitFor(() => expect(cancelled).toBeDefined(), { timeout: PATIENCE_MS });
  });

  test('a fetch that ignores its abort signal still times out (the download never hangs)', async () => {
    const never: FetchLike = () => new Promise<Response>(() => undefined);
    expect((await failure(fetchJwks('https://issuer.example/jwks.json', never, quick, NOW))).reason).toBe('timeout');
  });
});

describe('parseRetryAfter', () => {
  test.each([
    ['delta seconds', '120', 120],
    ['delta seconds with white space', ' 7 ', 7],
    ['an HTTP date 90 s ahead', new Date(NOW + 90_000).toUTCString(), 90],
    ['an HTTP date in the past', new Date(NOW - 90_000).toUTCString(), 0],
    ['more than a day, capped at a day', '999999', 86_400],
  ])('reads %s', (_name, value, seconds) => {
    expect(parseRetryAfter(value, NOW)).toBe(seconds);
  });

  test.each([
    ['no header', null],
    ['a negative number', '-5'],
    ['a fraction', '1.5'],
    ['garbage', 'soon'],
    ['a date without its time zone', '2030-01-01 00:01:00'],
    ['an asctime date (no GMT)', 'Tue Jan  1 00:02:00 2030'],
  ])('ignores %s', (_name, value) => {
    expect(parseRetryAfter(value, NOW)).toBeUndefined();
  });
});

describe('parseCacheControlMaxAge', () => {
  test.each([
    ['max-age alone', 'max-age=300', 300],
    ['among other directives, any case', 'public, Max-Age=120 , must-revalidate', 120],
    ['quoted', 'max-age="90"', 90],
    ['the same max-age twice', 'max-age=60, max-age=60', 60],
    ['no-store', 'public, no-store', 0],
    ['no-cache, whatever max-age says', 'max-age=600, no-cache', 0],
    ['a figure too long to matter', `max-age=${'9'.repeat(30)}`, Number.MAX_SAFE_INTEGER],
    ['leading zeros as its value (not as a figure too long)', 'max-age=0000000001', 1],
    ['many leading zeros', `max-age=${'0'.repeat(40)}600`, 600],
    ['zeros only', 'max-age=0000000000000', 0],
    ['leading zeros, quoted', 'max-age="000120"', 120],
    ['no-store after a malformed max-age (the order of directives does not matter)', 'max-age=12abc, no-store', 0],
    ['no-cache after two different max-ages', 'max-age=60, max-age=600, no-cache', 0],
  ])('reads %s', (_case, value, seconds) => {
    expect(parseCacheControlMaxAge(value)).toBe(seconds);
  });

  test.each([
    ['no header', null],
    ['no max-age', 'public, must-revalidate'],
    ['an empty max-age', 'max-age='],
    ['a negative max-age', 'max-age=-5'],
    ['a fraction', 'max-age=1.5'],
    ['trailing letters', 'max-age=12abc'],
    ['two different max-ages', 'max-age=60, max-age=600'],
    ['a max-age past the first 1024 characters', `${' '.repeat(1024)}max-age=60`],
  ])('ignores %s', (_case, value) => {
    expect(parseCacheControlMaxAge(value)).toBeUndefined();
  });

  test('a good download returns the served max-age', async () => {
    const fetchImpl = scripted(() => new Response('{"keys":[]}', { headers: { ...JSON_TYPE, 'cache-control': 'max-age=42' } }));
    await expect(fetchJwks('https://issuer.test/jwks', fetchImpl, LIMITS, NOW)).resolves.toEqual({ keys: [], maxAge: 42 });
  });

  /** The max-age a download reports when served with `cacheControl` and `age`. */
  async function servedMaxAge(cacheControl: string, age: string): Promise<number | undefined> {
    const fetchImpl = scripted(() => new Response('{"keys":[]}', { headers: { ...JSON_TYPE, 'cache-control': cacheControl, age } }));
    return (await fetchJwks('https://issuer.test/jwks', fetchImpl, LIMITS, NOW)).maxAge;
  }

  test('a served max-age is counted from the Age of the copy served (a CDN copy 100 s old has 200 s of 300 left)', async () => {
    expect(await servedMaxAge('max-age=300', '100')).toBe(200);
  });

  test('an Age past the max-age leaves the copy no freshness (0, not a negative figure)', async () => {
    expect(await servedMaxAge('max-age=300', '86400')).toBe(0);
  });

  test('an Age listed twice counts its first member', async () => {
    expect(await servedMaxAge('max-age=300', '100, 250')).toBe(200);
  });

  test.each([
    ['negative', '-100'],
    ['a fraction', '1.5'],
    ['not a number', 'old'],
  ])('an Age that is %s is ignored', async (_case, age) => {
    expect(await servedMaxAge('max-age=300', age)).toBe(300);
  });

  test('an Age without a served max-age changes nothing (jwksMaxAge then applies as it is)', async () => {
    expect(await servedMaxAge('public', '100')).toBeUndefined();
  });
});

describe('Content-Encoding with Node’s fetch (which decodes gzip, deflate and br itself)', () => {
  let encoded: JwksServer;
  let answer: { encoding: string; body: Buffer };

  beforeAll(async () => {
    encoded = await serveJwks(() => issuer.jwks, {
      respond(_request, response) {
        response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': answer.encoding });
        response.end(answer.body);
        return true;
      },
    });
  });

  afterAll(() => encoded.close());

  test('a gzip JWKS is read', async () => {
    answer = { encoding: 'gzip', body: gzipSync(JSON.stringify(issuer.jwks)) };
    await expect(fetchJwks(encoded.url, realFetch, LIMITS, NOW)).resolves.toMatchObject({ keys: issuer.jwks.keys });
  });

  test('a gzip bomb is too_large: decoded bytes count against the limit', async () => {
    answer = { encoding: 'gzip', body: gzipSync(Buffer.alloc(LIMITS.maxBytes * 64, 0x20)) };
    expect((await failure(fetchJwks(encoded.url, realFetch, LIMITS, NOW))).reason).toBe('too_large');
  });

  test('an unknown Content-Encoding is content_encoding, not a body read as it came', async () => {
    answer = { encoding: 'x-squeeze', body: Buffer.from(JSON.stringify(issuer.jwks)) };
    const error = await failure(fetchJwks(encoded.url, realFetch, LIMITS, NOW));
    expect(error.reason).toBe('content_encoding');
    expect(error.message).toContain('"x-squeeze"');
  });

  test('a body that is not the gzip its Content-Encoding says is content_encoding, not network', async () => {
    const broken = gzipSync(JSON.stringify(issuer.jwks));
    broken.fill(0x41, 20, 60);
    answer = { encoding: 'gzip', body: broken };
    expect((await failure(fetchJwks(encoded.url, realFetch, LIMITS, NOW))).reason).toBe('content_encoding');
  });
});

describe('HTTP framing from a raw server, with the default fetch on Node and with Node’s fetch', () => {
  /** The bytes the server writes for one request, before it closes the connection. */
  let script: (body: Buffer) => Buffer;
  let raw: net.Server;
  let rawUrl: string;
  const FETCHES: readonly (readonly [name: string, fetchImpl: FetchLike | undefined])[] = [
    ['the default fetch', undefined],
    ['Node’s fetch', realFetch],
  ];
  const head = (lines: string, version = '1.1') =>
    `HTTP/${version} 200 OK\r\ncontent-type: application/json\r\n${lines}connection: close\r\n\r\n`;

  beforeAll(async () => {
    raw = net.createServer((socket) => {
      socket.on('error', () => undefined);
      socket.once('data', () => socket.end(script(Buffer.from(JSON.stringify(issuer.jwks)))));
    });
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    rawUrl = `http://127.0.0.1:${(raw.address() as net.AddressInfo).port}/jwks.json`;
  });

  afterAll(() => new Promise<void>((resolve) => raw.close(() => resolve())));

  const CASES: readonly (readonly [title: string, script: (body: Buffer) => Buffer, outcome: JwksFailureReason | 'ok'])[] = [
    ['HTTP/1.0 without Content-Length, ended by the close, is read', (body) => Buffer.concat([Buffer.from(head('', '1.0')), body]), 'ok'],
    [
      'a UTF-8 byte order mark before the JSON is skipped',
      (body) => Buffer.concat([Buffer.from(head(`content-length: ${body.length + 3}\r\n`)), Buffer.from([0xef, 0xbb, 0xbf]), body]),
      'ok',
    ],
    [
      'a Content-Length shorter than the body cuts it: invalid_json',
      (body) => Buffer.concat([Buffer.from(head(`content-length: ${body.length - 10}\r\n`)), body]),
      'invalid_json',
    ],
    [
      'a Content-Length longer than the body, then a close: network',
      (body) => Buffer.concat([Buffer.from(head(`content-length: ${body.length + 10}\r\n`)), body]),
      'network',
    ],
    [
      'a malformed chunk size: network',
      (body) =>
        Buffer.concat([Buffer.from(head('transfer-encoding: chunked\r\n')), Buffer.from('zz\r\n'), body, Buffer.from('\r\n0\r\n\r\n')]),
      'network',
    ],
  ];

  for (const [name, fetchImpl] of FETCHES) {
    test.each(CASES)(`${name}: %s`, async (_title, answer, outcome) => {
      script = answer;
      const download = fetchJwks(rawUrl, fetchImpl, LIMITS, NOW);
      if (outcome === 'ok') await expect(download).resolves.toMatchObject({ keys: issuer.jwks.keys });
      else expect((await failure(download)).reason).toBe(outcome);
    });
  }

  test('the default fetch reads the 200 after interim 100 and 103 answers', async () => {
    script = (body) =>
      Buffer.concat([
        Buffer.from('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\n'),
        Buffer.from(head(`content-length: ${body.length}\r\n`)),
        body,
      ]);
    await expect(fetchJwks(rawUrl, undefined, LIMITS, NOW)).resolves.toMatchObject({ keys: issuer.jwks.keys });
  });
});
