/**
 * JWKS addresses are screened: registration (`IssuerRegistry`) and every download refuse a JWKS
 * host that is a special-purpose address or name, each case the attack it stops (a registry
 * writer pointing every gateway instance at this machine, its private network or its cloud's
 * metadata service). `jwksAllowedHosts` lets a named host through; `http:` on loopback (tests,
 * examples) still works. The check of the address a name resolves to is in
 * jwks-node-fetch.test.ts.
 */
import { describe, expect, test, vi } from 'vitest';
import { type FetchLike, type IssuerEntry, IssuerRegistry, type JwksFetchEvent, createVerifier } from '../../src/index.js';
import { createTestIssuer } from '../../src/testing/index.js';
import { verifierFixture } from '../support/verifier-fixture.js';

const AUDIENCE = 'https://payments.test';

function entry(jwksUri: string): IssuerEntry {
  return { issuer: 'https://auth.acme.example', jwksUri, products: ['acme'] };
}

/** Each special-purpose JWKS URL: what registering it would let a registry writer reach, and the rule. */
const REFUSED: readonly (readonly [attack: string, jwksUri: string, host: string, rule: string])[] = [
  ['0.0.0.0, which reaches this machine', 'https://0.0.0.0/jwks.json', '0.0.0.0', 'this_network'],
  ['another 0.0.0.0/8 address', 'https://0.1.2.3/jwks.json', '0.1.2.3', 'this_network'],
  ['the IPv6 unspecified address', 'https://[::]/jwks.json', '[::]', 'this_network'],
  ['a service on this machine over https', 'https://127.0.0.1:6379/', '127.0.0.1', 'loopback'],
  ['loopback spelt in hex (the URL parser reads it as 127.0.0.1)', 'https://0x7f.0.0.1/jwks.json', '127.0.0.1', 'loopback'],
  ['loopback spelt as one number', 'https://2130706433/jwks.json', '127.0.0.1', 'loopback'],
  ['the rest of 127.0.0.0/8', 'https://127.255.0.9/jwks.json', '127.255.0.9', 'loopback'],
  ['IPv6 loopback over https', 'https://[::1]/jwks.json', '[::1]', 'loopback'],
  ['localhost over https', 'https://localhost/jwks.json', 'localhost', 'loopback'],
  ['a *.localhost name', 'https://admin.localhost/jwks.json', 'admin.localhost', 'loopback'],
  ['the cloud metadata service', 'https://169.254.169.254/latest/meta-data/', '169.254.169.254', 'metadata'],
  ["AWS ECS's task metadata", 'https://169.254.170.2/v2/credentials', '169.254.170.2', 'metadata'],
  ['a link-local address', 'https://169.254.10.10/jwks.json', '169.254.10.10', 'link_local'],
  ['RFC 1918: 10.0.0.0/8', 'https://10.0.0.7/jwks.json', '10.0.0.7', 'private'],
  ['RFC 1918: 172.16.0.0/12, low end', 'https://172.16.0.1/jwks.json', '172.16.0.1', 'private'],
  ['RFC 1918: 172.16.0.0/12, high end', 'https://172.31.255.254/jwks.json', '172.31.255.254', 'private'],
  ['RFC 1918: 192.168.0.0/16', 'https://192.168.1.1/jwks.json', '192.168.1.1', 'private'],
  ['shared address space 100.64.0.0/10', 'https://100.64.0.1/jwks.json', '100.64.0.1', 'shared'],
  ['the last address of 0.0.0.0/8', 'https://0.255.255.255/jwks.json', '0.255.255.255', 'this_network'],
  ['the last address of 10.0.0.0/8', 'https://10.255.255.255/jwks.json', '10.255.255.255', 'private'],
  ['the first address of 172.16.0.0/12', 'https://172.16.0.0/jwks.json', '172.16.0.0', 'private'],
  ['the last address of 192.168.0.0/16', 'https://192.168.255.255/jwks.json', '192.168.255.255', 'private'],
  ['the last address of 100.64.0.0/10', 'https://100.127.255.255/jwks.json', '100.127.255.255', 'shared'],
  ['the last address of 169.254.0.0/16', 'https://169.254.255.255/jwks.json', '169.254.255.255', 'link_local'],
  ["Alibaba Cloud's metadata service", 'https://100.100.100.200/latest/', '100.100.100.200', 'metadata'],
  ["Azure's WireServer (a public address)", 'https://168.63.129.16/machine', '168.63.129.16', 'metadata'],
  ['an IPv6 unique local address (fd00::/8)', 'https://[fd00::1]/jwks.json', '[fd00::1]', 'private'],
  ['an IPv6 unique local address (fc00::/8)', 'https://[fc00::1]/jwks.json', '[fc00::1]', 'private'],
  ["AWS's IPv6 metadata service", 'https://[fd00:ec2::254]/latest/', '[fd00:ec2::254]', 'metadata'],
  ['an IPv6 link-local address', 'https://[fe80::1]/jwks.json', '[fe80::1]', 'link_local'],
  ['an IPv4-mapped loopback address', 'https://[::ffff:127.0.0.1]/jwks.json', '[::ffff:7f00:1]', 'ipv4_mapped'],
  ['an IPv4-mapped metadata address', 'https://[::ffff:169.254.169.254]/', '[::ffff:a9fe:a9fe]', 'ipv4_mapped'],
  ['an IPv4-mapped address spelt in full', 'https://[0:0:0:0:0:ffff:7f00:1]/jwks.json', '[::ffff:7f00:1]', 'ipv4_mapped'],
  ['an IPv4-compatible loopback address', 'https://[::127.0.0.1]/jwks.json', '[::7f00:1]', 'ipv4_compatible'],
  ['NAT64 to the metadata service', 'https://[64:ff9b::169.254.169.254]/', '[64:ff9b::a9fe:a9fe]', 'metadata'],
  ['NAT64 to a private address', 'https://[64:ff9b::10.0.0.7]/jwks.json', '[64:ff9b::a00:7]', 'private'],
  ["Google Cloud's metadata name", 'https://metadata.google.internal/computeMetadata/v1/', 'metadata.google.internal', 'metadata'],
  ['the metadata name in capitals with a trailing dot', 'https://METADATA.Google.Internal./', 'metadata.google.internal.', 'metadata'],
  ['metadata.goog', 'https://metadata.goog/jwks.json', 'metadata.goog', 'metadata'],
  ['the bare name metadata', 'https://metadata/computeMetadata/v1/', 'metadata', 'metadata'],
  ["AWS's instance-data name", 'https://instance-data.ec2.internal/latest/', 'instance-data.ec2.internal', 'metadata'],
  ['a *.internal name', 'https://jwks.corp.internal/jwks.json', 'jwks.corp.internal', 'private_name'],
  ['a *.local (mDNS) name', 'https://printer.local/jwks.json', 'printer.local', 'private_name'],
  ['a *.home.arpa name', 'https://router.home.arpa/jwks.json', 'router.home.arpa', 'private_name'],
  ['a name without a dot (the local search domains)', 'https://jwks-service/jwks.json', 'jwks-service', 'private_name'],
];

/** Public hosts, and `http:` on loopback: registered and downloaded as before. */
const ACCEPTED: readonly (readonly [what: string, jwksUri: string])[] = [
  ['a public name', 'https://auth.acme.example/jwks.json'],
  ['a public IPv4 address', 'https://8.8.8.8/jwks.json'],
  ['1.0.0.0, just past 0.0.0.0/8', 'https://1.0.0.0/jwks.json'],
  ['9.255.255.255, just before 10.0.0.0/8', 'https://9.255.255.255/jwks.json'],
  ['11.0.0.0, just past 10.0.0.0/8', 'https://11.0.0.0/jwks.json'],
  ['126.255.255.255, just before 127.0.0.0/8', 'https://126.255.255.255/jwks.json'],
  ['128.0.0.0, just past 127.0.0.0/8', 'https://128.0.0.0/jwks.json'],
  ['172.15.255.255, just before 172.16.0.0/12', 'https://172.15.255.255/jwks.json'],
  ['172.32.0.1, just past 172.16.0.0/12', 'https://172.32.0.1/jwks.json'],
  ['192.167.255.255, just before 192.168.0.0/16', 'https://192.167.255.255/jwks.json'],
  ['192.169.0.0, just past 192.168.0.0/16', 'https://192.169.0.0/jwks.json'],
  ['100.63.255.255, just before 100.64.0.0/10', 'https://100.63.255.255/jwks.json'],
  ['100.128.0.1, just past 100.64.0.0/10', 'https://100.128.0.1/jwks.json'],
  ['169.255.0.1, just past 169.254.0.0/16', 'https://169.255.0.1/jwks.json'],
  ['169.253.255.255, just before 169.254.0.0/16', 'https://169.253.255.255/jwks.json'],
  ['a public IPv6 address', 'https://[2001:4860:4860::8888]/jwks.json'],
  ['NAT64 to a public address', 'https://[64:ff9b::8.8.8.8]/jwks.json'],
  ['http: on 127.0.0.1 (tests, examples)', 'http://127.0.0.1:8080/jwks.json'],
  ['http: on the rest of 127.0.0.0/8', 'http://127.1.2.3:8080/jwks.json'],
  ['http: on localhost', 'http://localhost:8080/jwks.json'],
  ['http: on [::1]', 'http://[::1]:8080/jwks.json'],
];

function registrationError(jwksUri: string, options?: ConstructorParameters<typeof IssuerRegistry>[1]): Error & Record<string, unknown> {
  try {
    new IssuerRegistry([entry(jwksUri)], options);
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error(`${jwksUri} was registered`);
}

describe('registration refuses each special-purpose JWKS address', () => {
  test.each(REFUSED)('%s (%s)', (_attack, jwksUri, host, rule) => {
    const error = registrationError(jwksUri);
    expect(error).toBeInstanceOf(TypeError);
    expect(error).toMatchObject({ name: 'JwksAddressError', code: 'jwks_address_refused', host, rule });
  });

  test.each(ACCEPTED)('registers %s', (_what, jwksUri) => {
    expect(new IssuerRegistry([entry(jwksUri)]).size).toBe(1);
  });

  test('the error names the entry, the host, the range, the rule and the way out', () => {
    const { message, range } = registrationError('https://169.254.169.254/latest/meta-data/');
    expect(range).toBe('169.254.169.254/32');
    expect(message).toContain('IssuerRegistry: entries[0] ("https://auth.acme.example").jwksUri');
    expect(message).toContain('"169.254.169.254" is a cloud metadata service (169.254.169.254/32; rule metadata)');
    expect(message).toContain('jwksAllowedHosts ["169.254.169.254"]');
    expect(message).toContain('--allow-jwks-host "169.254.169.254"');
  });

  test('the issuer (iss) is compared, never fetched: only the jwksUri is screened', () => {
    expect(new IssuerRegistry([{ ...entry('https://auth.acme.example/jwks.json'), issuer: 'https://auth.acme.internal' }]).size).toBe(1);
  });
});

describe('jwksAllowedHosts lets a named host through registration, and only that host', () => {
  test('an allowed private address is registered', () => {
    const registry = new IssuerRegistry([entry('https://10.0.0.7/jwks.json')], { jwksAllowedHosts: ['10.0.0.7'] });
    expect(registry.jwksAllowedHosts).toEqual(['10.0.0.7']);
  });

  test('another address of the same network is still refused', () => {
    expect(registrationError('https://10.0.0.8/jwks.json', { jwksAllowedHosts: ['10.0.0.7'] })).toMatchObject({ rule: 'private' });
  });

  test('a name is matched as a URL names it: any case, a trailing dot', () => {
    expect(() => new IssuerRegistry([entry('https://jwks.corp.internal/')], { jwksAllowedHosts: ['JWKS.Corp.Internal.'] })).not.toThrow();
  });

  test('an IPv6 address is matched with or without brackets', () => {
    expect(() => new IssuerRegistry([entry('https://[fd00::5]/')], { jwksAllowedHosts: ['FD00:0::5'] })).not.toThrow();
  });

  test.each([
    ['not an array', 'jwks.corp.internal'],
    ['a URL', ['https://jwks.corp.internal/']],
    ['a host with a port', ['jwks.corp.internal:443']],
    ['a wildcard', ['*.corp.internal']],
    ['an empty string', ['']],
    ['not a string', [10]],
  ])('%s is refused, naming the option', (_case, value) => {
    expect(() => new IssuerRegistry([entry('https://auth.acme.example/')], { jwksAllowedHosts: value as string[] })).toThrow(
      /IssuerRegistry: jwksAllowedHosts.* must be/,
    );
  });
});

const fixture = verifierFixture(() => ({ registry: [], audience: AUDIENCE }));
/** The events of the verifier made last. */
const log = fixture.log;

/** A verifier whose registry allows `jwksUri`'s host, but which itself allows `allowed`. */
function downloader(jwksUri: string, host: string, allowed: readonly string[], fetch: FetchLike) {
  const registry = new IssuerRegistry([entry(jwksUri)], { jwksAllowedHosts: [host] });
  return fixture.verifier({ registry, fetch, jwksAllowedHosts: allowed });
}

describe('every download refuses each special-purpose JWKS address, whatever the fetch', () => {
  test.each(REFUSED)('%s (%s): no request, a failed download naming the rule', async (_attack, jwksUri, host, rule) => {
    const fetch = vi.fn<FetchLike>(async () => Response.json({ keys: [] }));
    const [report] = await downloader(jwksUri, host, [], fetch).warmUp();
    expect(fetch).not.toHaveBeenCalled();
    expect(report).toMatchObject({ ok: false, error: expect.stringContaining(`rule ${rule}`) });
    expect(log.fetches()).toMatchObject([{ outcome: 'error', reason: 'address', address: { host, address: host, rule } }]);
  });

  test('the verifier allows what its registry allows, unless given its own list', async () => {
    const fetch = vi.fn<FetchLike>(async () => Response.json({ keys: [] }));
    const registry = new IssuerRegistry([entry('https://10.0.0.7/jwks.json')], { jwksAllowedHosts: ['10.0.0.7'] });
    await createVerifier({ registry, audience: AUDIENCE, fetch }).warmUp();
    expect(fetch).toHaveBeenCalledTimes(1);
  });

  test("jwksAllowedHosts on the verifier lets its downloads and its registry's entries through", async () => {
    const fetch = vi.fn<FetchLike>(async () => Response.json({ keys: [] }));
    const verifier = createVerifier({
      registry: [entry('https://10.0.0.7/jwks.json')],
      audience: AUDIENCE,
      fetch,
      jwksAllowedHosts: ['10.0.0.7'],
    });
    const [report] = await verifier.warmUp();
    expect(report).toMatchObject({ ok: true, keys: 0 });
    expect(fetch).toHaveBeenCalledTimes(1);
  });

  test('a verifier built from entries refuses them without jwksAllowedHosts', () => {
    expect(() => createVerifier({ registry: [entry('https://10.0.0.7/jwks.json')], audience: AUDIENCE })).toThrow(
      expect.objectContaining({ code: 'jwks_address_refused', rule: 'private' }),
    );
  });

  test("setRegistry(entries) checks them with the verifier's jwksAllowedHosts", () => {
    const verifier = createVerifier({
      registry: [entry('https://auth.acme.example/')],
      audience: AUDIENCE,
      jwksAllowedHosts: ['10.0.0.7'],
    });
    expect(verifier.setRegistry([entry('https://10.0.0.7/jwks.json')]).updated).toEqual(['https://auth.acme.example']);
    expect(() => verifier.setRegistry([entry('https://10.0.0.8/jwks.json')])).toThrow(expect.objectContaining({ rule: 'private' }));
  });

  test("setRegistry(registry) brings that registry's allowed hosts, for a verifier not given its own", async () => {
    const fetch = vi.fn<FetchLike>(async () => Response.json({ keys: [] }));
    const verifier = createVerifier({ registry: [entry('https://auth.acme.example/')], audience: AUDIENCE, fetch });
    verifier.setRegistry(new IssuerRegistry([entry('https://10.0.0.7/jwks.json')], { jwksAllowedHosts: ['10.0.0.7'] }));
    await expect(verifier.warmUp()).resolves.toMatchObject([{ ok: true }]);
  });

  test('a verifier given its own list keeps it whatever registry setRegistry installs', async () => {
    const fetch = vi.fn<FetchLike>(async () => Response.json({ keys: [] }));
    const verifier = createVerifier({ registry: [entry('https://auth.acme.example/')], audience: AUDIENCE, fetch, jwksAllowedHosts: [] });
    verifier.setRegistry(new IssuerRegistry([entry('https://10.0.0.7/jwks.json')], { jwksAllowedHosts: ['10.0.0.7'] }));
    await expect(verifier.warmUp()).resolves.toMatchObject([{ ok: false }]);
    expect(fetch).not.toHaveBeenCalled();
  });

  test('a verification answers jwks_unavailable (503), its hint naming the host and the rule', async () => {
    const fetch = vi.fn<FetchLike>(async () => Response.json({ keys: [] }));
    const verifier = downloader('https://169.254.169.254/jwks.json', '169.254.169.254', [], fetch);
    const issuer = await createTestIssuer({ issuer: 'https://auth.acme.example', audience: AUDIENCE, product: 'acme' });
    const error = await verifier.verify(await issuer.token()).then(
      () => undefined,
      (caught: unknown) => caught as { code: string; status: number; hint: string },
    );
    expect(error).toMatchObject({ code: 'jwks_unavailable', status: 503 });
    expect(error?.hint).toMatch(
      /^The keys of "https:\/\/auth\.acme\.example" are not loaded from "https:\/\/169\.254\.169\.254\/jwks\.json": The JWKS host "169\.254\.169\.254" is a cloud metadata service/,
    );
    expect(error?.hint).toContain('jwksAllowedHosts ["169.254.169.254"]');
    expect((log.fetches()[0] as JwksFetchEvent).reason).toBe('address');
  });

  test('jwksAllowedHosts of the verifier is checked, naming the option', () => {
    expect(() =>
      createVerifier({ registry: [entry('https://auth.acme.example/')], audience: AUDIENCE, jwksAllowedHosts: ['a/b'] }),
    ).toThrow(/createVerifier: jwksAllowedHosts\[0\] must be a bare host/);
  });
});
