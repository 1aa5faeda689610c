/**
 * The JWKS download's default `fetch` on Node screens the address it connects to: a name that
 * resolves (here through a resolver stub in place of `dns.lookup`) to a special-purpose address is
 * refused before any connection, in the same lookup the connection uses, so DNS rebinding has no
 * check to race. A listener on 127.0.0.1 counts the connections that would be the attack.
 */
import net from 'node:net';
import zlib from 'node:zlib';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest';
import { JwksFetchError, fetchJwks } from '../../src/core/jwks-fetch.js';
import { type IssuerEntry, IssuerRegistry, type VerifierOptions, createVerifier } from '../../src/index.js';
import { type JwksServer, type TestIssuer, createTestIssuer, serveJwks } from '../../src/testing/index.js';
import { type ResolverStub, stubResolver } from '../support/resolver-stub.js';
import { PATIENCE_MS } from '../support/loaded-machine.js';
import { verifierFixture } from '../support/verifier-fixture.js';

const AUDIENCE = 'https://payments.test';
const ISS = 'https://auth.acme.example';

let resolver: ResolverStub;

beforeEach(() => {
  resolver = stubResolver();
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** A TCP listener on 127.0.0.1 that counts connections and closes each at once. */
let listener: net.Server;
let port: number;
let connections = 0;

beforeAll(async () => {
  listener = net.createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  port = (listener.address() as net.AddressInfo).port;
});

afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())));

/** Resolves once the listener has counted more than `before` connections (polled), or rejects after PATIENCE_MS. */
async function connectionAfter(before: number): Promise<void> {
  const deadline = Date.now() + PATIENCE_MS;
  while (connections <= before) {
    if (Date.now() > deadline) throw new Error('no connection reached the listener');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function entry(jwksUri: string): IssuerEntry {
  return { issuer: ISS, jwksUri, products: ['acme'] };
}

const fixture = verifierFixture(() => ({ registry: [], audience: AUDIENCE, jwksAllowedHosts: [] }));
/** The events of the verifier made last. */
const log = fixture.log;

/** A verifier with the default fetch; its registry allows `registryAllows` (registration is not under test here). */
function verifier(jwksUri: string, options: Partial<VerifierOptions> & { registryAllows?: string[] } = {}) {
  const { registryAllows = [], ...rest } = options;
  return fixture.verifier({ registry: new IssuerRegistry([entry(jwksUri)], { jwksAllowedHosts: registryAllows }), ...rest });
}

/** Each special-purpose address a name may resolve to, and the rule that refuses it. */
const RESOLVED: readonly (readonly [address: string, rule: string])[] = [
  ['127.0.0.1', 'loopback'],
  ['127.8.9.10', 'loopback'],
  ['0.0.0.0', 'this_network'],
  ['10.1.2.3', 'private'],
  ['172.20.0.1', 'private'],
  ['192.168.0.10', 'private'],
  ['100.64.1.1', 'shared'],
  ['169.254.169.254', 'metadata'],
  ['169.254.1.1', 'link_local'],
  ['100.100.100.200', 'metadata'],
  ['::1', 'loopback'],
  ['::', 'this_network'],
  ['fe80::1', 'link_local'],
  ['fd00::2', 'private'],
  ['fc00::1', 'private'],
  ['fd00:ec2::254', 'metadata'],
  ['::ffff:127.0.0.1', 'ipv4_mapped'],
  ['::ffff:a9fe:a9fe', 'ipv4_mapped'],
  ['64:ff9b::a9fe:a9fe', 'metadata'],
];

describe('a name that resolves to a special-purpose address is refused at connection (resolver stub)', () => {
  test.each(RESOLVED)('%s: refused as %s, naming the host, the address and the rule', async (address, rule) => {
    const host = 'jwks.rebind.example';
    resolver.set(host, [address]);
    const [report] = await verifier(`https://${host}/jwks.json`).warmUp();
    expect(report).toMatchObject({ ok: false, error: expect.stringContaining(`"${host}" resolves to "${address}"`) });
    expect(log.fetches()).toMatchObject([{ outcome: 'error', reason: 'address', address: { host, address, rule } }]);
    expect(resolver.lookups).toEqual([host]);
  });

  test('a name answering a public and a private address is refused: one refused address refuses the host', async () => {
    resolver.set('jwks.mixed.example', ['203.0.113.5', '10.0.0.1']);
    await verifier('https://jwks.mixed.example/jwks.json').warmUp();
    expect(log.fetches()).toMatchObject([{ reason: 'address', address: { address: '10.0.0.1', rule: 'private' } }]);
  });

  test('the verification answers jwks_unavailable (503), not a connection to the address', async () => {
    resolver.set('auth.acme.example', ['169.254.169.254']);
    const issuer = await createTestIssuer({ issuer: ISS, audience: AUDIENCE, product: 'acme' });
    const error = await verifier(issuer.entry.jwksUri)
      .verify(await issuer.token())
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );
    expect(error).toMatchObject({ code: 'jwks_unavailable', status: 503 });
  });
});

describe('the attack on this machine: connections that must not reach its listener', () => {
  test.each(['0.0.0.0', '::ffff:127.0.0.1'])('control: %s does reach a listener on 127.0.0.1 here (the attack is real)', async (host) => {
    const before = connections;
    const socket = net.connect({ host, port });
    socket.on('error', () => undefined);
    await connectionAfter(before);
    socket.destroy();
  });

  /** The hosts that reach this machine, as written in a URL and as the URL parser names them. */
  const ON_THIS_MACHINE = [
    ['0.0.0.0', '0.0.0.0'],
    ['[::ffff:127.0.0.1]', '[::ffff:7f00:1]'],
  ] as const;

  test.each(ON_THIS_MACHINE)('a download from %s does not reach the listener', async (written, host) => {
    const before = connections;
    const [report] = await verifier(`https://${written}:${port}/jwks.json`, { registryAllows: [host] }).warmUp();
    expect(report?.ok).toBe(false);
    expect(log.fetches()).toMatchObject([{ reason: 'address', address: { host } }]);
    expect(connections).toBe(before);
  });

  test.each(ON_THIS_MACHINE)('allowed by name, a download from %s does reach it (the refusal is what stops it)', async (written, host) => {
    const before = connections;
    await verifier(`https://${written}:${port}/jwks.json`, { registryAllows: [host], jwksAllowedHosts: [written] }).warmUp();
    await connectionAfter(before);
    expect(log.fetches()).toMatchObject([{ reason: 'network' }]);
  });

  test('a name resolving to 127.0.0.1 does not reach the listener', async () => {
    resolver.set('jwks.rebind.example', ['127.0.0.1']);
    const before = connections;
    await verifier(`https://jwks.rebind.example:${port}/jwks.json`).warmUp();
    expect(log.fetches()).toMatchObject([{ reason: 'address', address: { address: '127.0.0.1', rule: 'loopback' } }]);
    expect(connections).toBe(before);
  });

  test('allowed by name, the same name reaches it: jwksAllowedHosts lets a named host through', async () => {
    resolver.set('jwks.rebind.example', ['127.0.0.1']);
    const before = connections;
    await verifier(`https://jwks.rebind.example:${port}/jwks.json`, { jwksAllowedHosts: ['jwks.rebind.example'] }).warmUp();
    await connectionAfter(before);
    expect(log.fetches()).toMatchObject([{ reason: 'network' }]);
  });

  test('DNS rebinding: a name that answers a public address, then 127.0.0.1, is looked up once per connection and never reaches the listener', async () => {
    // A check that resolved the name, then a connection that resolved it again, would connect to 127.0.0.1.
    resolver.set('jwks.rebind.example', (call) => (call === 0 ? ['203.0.113.5'] : ['127.0.0.1']));
    const before = connections;
    await verifier(`https://jwks.rebind.example:${port}/jwks.json`, { jwksTimeout: 1 }).warmUp();
    expect(resolver.lookups).toEqual(['jwks.rebind.example']);
    expect(log.fetches()).toMatchObject([{ outcome: 'error' }]);
    expect(log.fetches()[0]?.reason).not.toBe('address');
    expect(connections).toBe(before);
  });
});

describe('the http: loopback exception still works for test servers on 127.0.0.1', () => {
  let issuer: TestIssuer;
  let server: JwksServer;

  beforeAll(async () => {
    issuer = await createTestIssuer({ issuer: ISS, audience: AUDIENCE, product: 'acme' });
    server = await serveJwks(() => issuer.jwks);
  });

  afterAll(() => server.close());

  test.each([
    ['127.0.0.1', (url: string) => url],
    ['localhost (resolved to a loopback address, which the exception allows)', (url: string) => url.replace('127.0.0.1', 'localhost')],
  ])('http://%s verifies with the default fetch', async (_host, jwksUri) => {
    const gateway = createVerifier({ registry: [entry(jwksUri(server.url))], audience: AUDIENCE });
    await expect(gateway.verify(await issuer.token())).resolves.toMatchObject({ issuer: ISS });
  });

  test('a name resolving to 127.0.0.1 over http: is refused by the registry (http: only on a loopback host)', () => {
    expect(() => new IssuerRegistry([entry(server.url.replace('127.0.0.1', 'jwks.rebind.example'))])).toThrow(
      /http: is allowed only for loopback/,
    );
  });
});

describe('compressed bodies: decoded as fetch decodes them, decoded bytes counted against the limit', () => {
  const ENCODE: Readonly<Record<string, (data: Buffer) => Buffer>> = {
    gzip: (data) => zlib.gzipSync(data),
    'x-gzip': (data) => zlib.gzipSync(data),
    deflate: (data) => zlib.deflateSync(data),
    br: (data) => zlib.brotliCompressSync(data),
  };
  /** Megabytes of spaces the bomb inflates to, inside a valid JSON prefix; its gzip is about 1/1000 of it. */
  const BOMB_MB = 64;
  /** At most this share of the bomb may be decoded before the download stops: the limit is 1/256 of it, and 1/16 leaves room for the buffers between. */
  const BOMB_SHARE = 16;
  let issuer: TestIssuer;
  let server: JwksServer;
  let bomb: Buffer;
  /** What the next answer carries: its Content-Encoding and body. */
  let answer: { encoding: string; body: Buffer };

  beforeAll(async () => {
    issuer = await createTestIssuer({ issuer: ISS, audience: AUDIENCE, product: 'acme' });
    const gzip = zlib.createGzip({ level: 9 });
    const parts: Buffer[] = [];
    gzip.on('data', (part: Buffer) => parts.push(part));
    const done = new Promise((resolve) => gzip.on('end', resolve));
    gzip.write('{"keys":[],"padding":"');
    const megabyte = Buffer.alloc(1024 * 1024, 0x20);
    for (let index = 0; index < BOMB_MB; index += 1) gzip.write(megabyte);
    gzip.end('"}');
    await done;
    bomb = Buffer.concat(parts);
    server = await serveJwks(() => issuer.jwks, {
      respond(_request, response) {
        response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': answer.encoding });
        response.end(answer.body);
        return true;
      },
    });
  });

  afterAll(() => server.close());

  const LIMITS = { timeout: PATIENCE_MS / 1000, maxBytes: 256 * 1024, maxKeys: 100, maxRedirects: 0, allowedHosts: new Set<string>() };

  test.each(Object.keys(ENCODE))('a JWKS served with Content-Encoding %s verifies with the default fetch', async (encoding) => {
    answer = { encoding, body: (ENCODE[encoding] as (data: Buffer) => Buffer)(Buffer.from(JSON.stringify(issuer.jwks))) };
    const gateway = createVerifier({ registry: [entry(server.url)], audience: AUDIENCE });
    await expect(gateway.verify(await issuer.token())).resolves.toMatchObject({ issuer: ISS });
  });

  test('a gzip bomb is too_large, decoded only up to the limit: most of it is never inflated', async () => {
    expect(bomb.byteLength).toBeLessThan(LIMITS.maxBytes);
    answer = { encoding: 'gzip', body: bomb };
    // The default fetch loads node:zlib at each download: its decoder, counted.
    const decoders: zlib.Gunzip[] = [];
    const createGunzip = zlib.createGunzip;
    vi.spyOn(zlib, 'createGunzip').mockImplementation((options) => {
      const decoder = createGunzip(options);
      decoders.push(decoder);
      return decoder;
    });
    const outcome = await fetchJwks(server.url, undefined, LIMITS, Date.now()).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(JwksFetchError);
    expect((outcome as JwksFetchError).reason).toBe('too_large');
    expect(decoders).toHaveLength(1);
    // Compressed bytes the decoder took in, about 1/1000 of what they inflate to: a reader that
    // went on would have taken in the whole bomb.
    expect(decoders[0]?.bytesWritten).toBeLessThan(bomb.byteLength / BOMB_SHARE);
  });

  test('a body that is not the gzip its Content-Encoding says fails as content_encoding', async () => {
    const broken = zlib.gzipSync(Buffer.from(JSON.stringify(issuer.jwks)));
    broken.fill(0x41, 20, 60);
    answer = { encoding: 'gzip', body: broken };
    const outcome = await fetchJwks(server.url, undefined, LIMITS, Date.now()).catch((error: unknown) => error);
    expect((outcome as JwksFetchError).reason).toBe('content_encoding');
  });

  test('an unknown Content-Encoding fails as content_encoding and names it', async () => {
    answer = { encoding: 'x-squeeze', body: Buffer.from(JSON.stringify(issuer.jwks)) };
    const outcome = await fetchJwks(server.url, undefined, LIMITS, Date.now()).catch((error: unknown) => error);
    expect((outcome as JwksFetchError).reason).toBe('content_encoding');
    expect((outcome as JwksFetchError).message).toContain('"x-squeeze"');
  });

  test('two content codings in a row fail as content_encoding (one coding is decoded, never a stack)', async () => {
    answer = { encoding: 'gzip, gzip', body: zlib.gzipSync(zlib.gzipSync(Buffer.from(JSON.stringify(issuer.jwks)))) };
    const outcome = await fetchJwks(server.url, undefined, LIMITS, Date.now()).catch((error: unknown) => error);
    expect((outcome as JwksFetchError).reason).toBe('content_encoding');
  });
});
