import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { IssuerRegistry, createVerifier } from '../../src/index.js';
import {
  type AddKeyOptions,
  type RotateOptions,
  type TestIssuer,
  type TestIssuerOptions,
  type TestKey,
  createTestIssuer,
  createTestVerifier,
} from '../../src/testing/index.js';
import { jwksHandlers } from '../../src/testing/msw.js';

const decode = (token: string, part: 0 | 1) => JSON.parse(Buffer.from(token.split('.')[part]!, 'base64url').toString());

describe('createTestIssuer', () => {
  let issuer: TestIssuer;
  const server = setupServer();
  beforeAll(async () => {
    issuer = await createTestIssuer({
      product: 'acme',
      audience: 'https://payments.test',
      now: () => Date.UTC(2026, 0, 1),
    });
    server.use(...jwksHandlers(issuer));
    server.listen({ onUnhandledRequest: 'error' });
  });
  afterAll(() => server.close());

  test('defaults: issuer https://issuer.test, tenant ern:acme/tenants/t-1, scope pay:processPayments', async () => {
    const claims = decode(await issuer.token(), 1);
    expect(claims).toEqual({
      iss: 'https://issuer.test',
      sub: 'https://issuer.test',
      aud: 'https://payments.test',
      iat: Date.UTC(2026, 0, 1) / 1000,
      expt: Date.UTC(2026, 0, 1) / 1000 + 300,
      tenant_ern: 'ern:acme/tenants/t-1',
      tenant_name: 'Test Tenant',
      scope: 'pay:processPayments',
    });
  });

  test('signs with RS256 under its kid, typ JWT', async () => {
    expect(decode(await issuer.token(), 0)).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'test-key' });
  });

  test('overrides claims and header members, and removes them with undefined', async () => {
    const token = await issuer.token({ scope: 'hub:subscribe', tenant_name: undefined }, { kid: 'other', typ: undefined });
    expect(decode(token, 1)).toMatchObject({ scope: 'hub:subscribe' });
    expect(decode(token, 1)).not.toHaveProperty('tenant_name');
    expect(decode(token, 0)).toEqual({ alg: 'RS256', kid: 'other' });
  });

  test('publishes a 2048-bit RSA key for signatures', () => {
    const [jwk] = issuer.jwks.keys;
    expect(jwk).toMatchObject({ kty: 'RSA', kid: 'test-key', alg: 'RS256', use: 'sig', e: 'AQAB' });
    expect(Buffer.from(String(jwk?.n), 'base64url').length).toBe(256);
    expect(jwk).not.toHaveProperty('d');
  });

  test('gives a registry entry for its issuer, JWKS URL and product', () => {
    expect(issuer.entry).toEqual({
      issuer: 'https://issuer.test',
      jwksUri: 'https://issuer.test/.well-known/jwks.json',
      products: ['acme'],
    });
  });

  test('its msw handlers serve the JWKS at the entry URL and count the requests', async () => {
    const before = issuer.jwksRequests;
    const response = await fetch(issuer.entry.jwksUri);
    expect(await response.json()).toEqual(issuer.jwks);
    expect(issuer.jwksRequests).toBe(before + 1);
  });

  test('its tokens verify with a verifier trusting its entry', async () => {
    const verifier = createVerifier({
      registry: new IssuerRegistry([issuer.entry]),
      audience: 'https://payments.test',
      now: () => Date.UTC(2026, 0, 1),
    });
    await expect(verifier.verify(await issuer.token())).resolves.toMatchObject({ tenant: { id: 't-1' } });
  });
});

describe('createTestIssuer option checks', () => {
  test('refuses options that are not an object, naming the value found', async () => {
    await expect(createTestIssuer(null as unknown as TestIssuerOptions)).rejects.toThrow(
      /^createTestIssuer: options must be an object, got null$/,
    );
  });

  test.each([
    ['a string', '300', /createTestIssuer: lifetime must be a number of seconds from 0 to 31622400, got "300"/],
    ['negative', -5, /createTestIssuer: lifetime must be .*, got -5/],
    ['NaN', Number.NaN, /createTestIssuer: lifetime must be .*, got NaN/],
  ])('refuses a lifetime that is %s, naming it and the value, before any token is minted', async (_name, lifetime, message) => {
    await expect(createTestIssuer({ lifetime: lifetime as number })).rejects.toThrow(message);
  });

  test.each([
    ['issuer', 42, /createTestIssuer: issuer must be a non-empty string, got 42/],
    ['scope', ['pay:processPayments'], /createTestIssuer: scope must be a non-empty string, got an array/],
    ['tenantName', null, /createTestIssuer: tenantName must be a non-empty string, got null/],
    ['kid', '', /createTestIssuer: kid must be a non-empty string, got ""/],
    ['jwksUri', 42, /createTestIssuer: jwksUri must be a non-empty string, got 42/],
  ])('refuses the option %s when it is not a non-empty string, naming it and the value', async (name, value, message) => {
    await expect(createTestIssuer({ [name]: value } as TestIssuerOptions)).rejects.toThrow(message);
  });

  test.each([
    [
      'an http: issuer',
      { issuer: 'http://issuer.test' },
      /^createTestIssuer: its registry entry is refused \(.*issuer.*got "http:\/\/issuer\.test".*\): fix the option/,
    ],
    ['an issuer that is no URL', { issuer: 'issuer' }, /^createTestIssuer: its registry entry is refused \(.*got "issuer".*\)/],
    [
      'a jwksUri that is no URL',
      { jwksUri: 'jwks.json' },
      /^createTestIssuer: its registry entry is refused \(.*jwksUri.*got "jwks\.json".*\)/,
    ],
  ])('refuses %s when made, as the registry would later, naming createTestIssuer and the value', async (_name, options, message) => {
    await expect(createTestIssuer(options)).rejects.toThrow(message);
  });

  test.each(['https://10.1.2.3/jwks.json', 'https://localhost/jwks.json'])(
    'takes a jwksUri on a special-purpose host (%s), leaving it to the jwksAllowedHosts of the registry built from it',
    async (jwksUri) => {
      const issuer = await createTestIssuer({ jwksUri });
      const host = new URL(jwksUri).hostname;
      expect(new IssuerRegistry([issuer.entry], { jwksAllowedHosts: [host] }).entries()[0]?.jwksUri).toBe(jwksUri);
    },
  );

  test('refuses a tenant that is no tenant ERN, naming createTestIssuer, tenant and the value', async () => {
    await expect(createTestIssuer({ tenant: 'acme/t-1' })).rejects.toThrow(
      /^createTestIssuer: tenant must be a tenant ERN, ern:<product>\/tenants\/<id> \(.*"acme\/t-1".*\)/,
    );
  });

  test('refuses a now that is not a function, naming it and the value', async () => {
    await expect(createTestIssuer({ now: Date.now() as unknown as () => number })).rejects.toThrow(
      /createTestIssuer: now must be a function, got \d+/,
    );
  });

  test("refuses a tenant of another product than the issuer's, whose every token would be tenant_not_allowed", async () => {
    await expect(createTestIssuer({ tenant: 'ern:other/tenants/t-1' })).rejects.toThrow(
      /^createTestIssuer: tenant "ern:other\/tenants\/t-1" is of the product "other", not the issuer's product "acme": give product: "other" too$/,
    );
    await expect(createTestIssuer({ product: 'other', tenant: 'ern:other/tenants/t-1' })).resolves.toMatchObject({ product: 'other' });
  });

  test.each([
    ['a number', 5, /createTestIssuer: audience must be a non-empty string or an array of them, got 5/],
    ['an empty array', [], /createTestIssuer: audience must be a non-empty string or an array of them, got an array/],
  ])('refuses an audience that is %s, naming it and the value', async (_name, audience, message) => {
    await expect(createTestIssuer({ audience: audience as string[] })).rejects.toThrow(message);
  });
});

describe('TestIssuer key management', () => {
  test('rotate() publishes a new key that signs from then on, keeping the old one published', async () => {
    const issuer = await createTestIssuer();
    const key = await issuer.rotate();
    expect(key.kid).toBe('test-key-2');
    expect(issuer.jwks.keys.map((jwk) => jwk.kid)).toEqual(['test-key', 'test-key-2']);
    expect(decode(await issuer.token(), 0).kid).toBe('test-key-2');
  });

  test('rotate({ retire: true }) unpublishes every other key', async () => {
    const issuer = await createTestIssuer();
    await issuer.rotate({ kid: 'k-2026-01', retire: true });
    expect(issuer.jwks.keys.map((jwk) => jwk.kid)).toEqual(['k-2026-01']);
  });

  test('addKey() publishes a key that signs only when asked', async () => {
    const issuer = await createTestIssuer();
    const weak = await issuer.addKey({ modulusLength: 1024, jwk: { use: undefined } });
    expect(issuer.jwks.keys.find((jwk) => jwk.kid === weak.kid)).not.toHaveProperty('use');
    expect(decode(await issuer.token(), 0).kid).toBe('test-key');
    expect(decode(await issuer.token({}, {}, { key: weak }), 0).kid).toBe(weak.kid);
  });

  test('rotate() refuses a misspelt option, naming the nearest, before any key is made', async () => {
    const issuer = await createTestIssuer();
    await expect(issuer.rotate({ publishonly: true } as RotateOptions)).rejects.toThrow(
      /rotate: unknown option "publishonly" \(did you mean "publishOnly"\?\)/,
    );
    expect(issuer.jwks.keys.map((jwk) => jwk.kid)).toEqual(['test-key']);
    expect(issuer.signingKey.kid).toBe('test-key');
  });

  test('rotate() refuses a publishOnly or retire that is not a boolean, naming it and the value', async () => {
    const issuer = await createTestIssuer();
    await expect(issuer.rotate({ publishOnly: 'yes' as unknown as boolean })).rejects.toThrow(
      /rotate: publishOnly must be a boolean, got "yes"/,
    );
    await expect(issuer.rotate({ retire: 1 as unknown as boolean })).rejects.toThrow(/rotate: retire must be a boolean, got 1/);
    expect(issuer.signingKey.kid).toBe('test-key');
  });

  test('addKey() refuses a misspelt option or a publish that is not a boolean', async () => {
    const issuer = await createTestIssuer();
    await expect(issuer.addKey({ publsh: false } as AddKeyOptions)).rejects.toThrow(
      /addKey: unknown option "publsh" \(did you mean "publish"\?\)/,
    );
    await expect(issuer.addKey({ publish: 'no' as unknown as boolean })).rejects.toThrow(/addKey: publish must be a boolean, got "no"/);
    expect(issuer.jwks.keys.map((jwk) => jwk.kid)).toEqual(['test-key']);
  });

  test("token() refuses a misspelt member of its options, so a test's key is never silently dropped", async () => {
    const issuer = await createTestIssuer();
    const other = await issuer.addKey();
    await expect(issuer.token({}, {}, { kye: other } as { key?: TestKey })).rejects.toThrow(
      /token: unknown option "kye" \(did you mean "key"\?\)/,
    );
  });

  test.each([
    [
      'claims given as a string',
      ['pay:chargeToken'],
      /^token: claims must be an object of claims .*, got "pay:chargeToken": for a segment .*use signRawToken\(\)$/,
    ],
    ['claims given as an array', [['scope']], /^token: claims must be an object of claims .*, got an array: /],
    ['a header given as null', [{}, null], /^token: header must be an object of header members .*, got null: /],
  ])('token() refuses %s, naming the value found, instead of minting a token from its characters', async (_name, args, message) => {
    const issuer = await createTestIssuer();
    await expect((issuer.token as (...args: unknown[]) => Promise<string>)(...args)).rejects.toThrow(message);
  });

  test('token() refuses a key option that is not a TestKey, naming the value found', async () => {
    const issuer = await createTestIssuer();
    await expect(issuer.token({}, {}, { key: 'test-key' as unknown as TestKey })).rejects.toThrow(
      /^token: key must be a TestKey \(from addKey\(\), rotate\(\) or generateTestKey\(\)\), got "test-key"$/,
    );
  });

  test('publish() and unpublish() edit the JWKS as given', async () => {
    const issuer = await createTestIssuer();
    issuer.publish({ kty: 'EC', kid: 'ec-1' });
    expect(issuer.jwks.keys.map((jwk) => jwk.kid)).toEqual(['test-key', 'ec-1']);
    issuer.unpublish('test-key');
    expect(issuer.jwks.keys.map((jwk) => jwk.kid)).toEqual(['ec-1']);
  });
});

describe('TestIssuer.listen', () => {
  test('serves the JWKS from a real server on 127.0.0.1 and points the entry at it', async () => {
    const issuer = await createTestIssuer({ audience: 'https://payments.test' });
    const server = await issuer.listen();
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\.well-known\/jwks\.json$/);
      expect(issuer.entry.jwksUri).toBe(server.url);
      const verifier = createTestVerifier(issuer);
      await expect(verifier.verify(await issuer.token())).resolves.toBeDefined();
      expect(server.requests).toBe(1);
      expect(issuer.jwksRequests).toBe(1);
    } finally {
      await issuer.close();
    }
  });

  test('refuses an onRequest that is not a function before any server starts, naming it and the value', async () => {
    const issuer = await createTestIssuer();
    await expect(issuer.listen({ onRequest: 42 as unknown as () => void })).rejects.toThrow(
      /^listen: onRequest must be a function, got 42$/,
    );
    expect(issuer.jwksUri).toBe('https://issuer.test/.well-known/jwks.json');
  });

  test('refuses a port under its own name, saying the port is ephemeral and where the URL is', async () => {
    const issuer = await createTestIssuer();
    await expect(issuer.listen({ port: 3000 } as never)).rejects.toThrow(
      /^listen: port is not an option, got 3000: the server listens on 127\.0\.0\.1 at an ephemeral port.*server\.url/,
    );
    expect(issuer.jwksUri).toBe('https://issuer.test/.well-known/jwks.json');
  });

  test('refuses options that are not an object under its own name, naming the value found', async () => {
    const issuer = await createTestIssuer();
    await expect(issuer.listen('/keys' as never)).rejects.toThrow(/^listen: options must be an object, got "\/keys"$/);
  });

  test('points the issuer back at its msw URL when the listen() server is closed on its own', async () => {
    const issuer = await createTestIssuer();
    const server = await issuer.listen();
    await server.close();
    expect(issuer.jwksUri).toBe('https://issuer.test/.well-known/jwks.json');
    expect(issuer.entry.jwksUri).toBe('https://issuer.test/.well-known/jwks.json');
  });

  test('points the issuer at the server still open when one of two listen() servers is closed', async () => {
    const issuer = await createTestIssuer();
    const first = await issuer.listen();
    const second = await issuer.listen();
    try {
      await second.close();
      expect(issuer.jwksUri).toBe(first.url);
      const verifier = createTestVerifier(issuer);
      await expect(verifier.verify(await issuer.token())).resolves.toBeDefined();
      expect(first.requests).toBe(1);
    } finally {
      await issuer.close();
    }
  });

  test('lets a kit verifier whose download failed before listen() verify at once after it', async () => {
    const issuer = await createTestIssuer();
    // No msw: the download of the msw URL fails, as it would off this machine; loopback goes through.
    const loopbackOnly = (input: string, init?: RequestInit) =>
      new URL(input).hostname === '127.0.0.1' ? globalThis.fetch(input, init) : Promise.reject(new TypeError('fetch failed'));
    const verifier = createTestVerifier(issuer, { fetch: loopbackOnly });
    await expect(verifier.verify(await issuer.token())).rejects.toMatchObject({ code: 'jwks_unavailable' });
    await issuer.listen();
    try {
      await expect(verifier.verify(await issuer.token())).resolves.toMatchObject({ issuer: 'https://issuer.test' });
    } finally {
      await issuer.close();
    }
  });

  test('answers 404 on other paths', async () => {
    const issuer = await createTestIssuer();
    const server = await issuer.listen();
    try {
      expect((await fetch(server.url.replace('jwks.json', 'other'))).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});

describe('createTestVerifier', () => {
  test("trusts the given issuers for the first one's audience", async () => {
    const acme = await createTestIssuer({ audience: 'https://payments.test' });
    const beta = await createTestIssuer({ issuer: 'https://beta.test', product: 'beta' });
    const verifier = createTestVerifier([acme, beta], { keys: { version: 1, issuers: [] } });
    expect(verifier.registry.issuers).toEqual(['https://issuer.test', 'https://beta.test']);
    expect(verifier.audiences).toEqual(['https://payments.test']);
  });

  test('refuses an issuer that is not one, naming its place and the value found', () => {
    expect(() => createTestVerifier(undefined as unknown as TestIssuer)).toThrow(
      /^createTestVerifier: issuers\[0\] must be a test issuer from createTestIssuer\(\), got undefined$/,
    );
  });

  test("refuses an issuer's registry entry given in place of the issuer, saying to pass the issuer", async () => {
    const issuer = await createTestIssuer();
    expect(() => createTestVerifier(issuer.entry as unknown as TestIssuer)).toThrow(
      /^createTestVerifier: issuers\[0\] must be a test issuer from createTestIssuer\(\), got an object without entry .*pass the issuer itself/,
    );
  });

  test("refuses a registry option, saying the issuers given make the verifier's registry", async () => {
    const issuer = await createTestIssuer();
    expect(() => createTestVerifier(issuer, { registry: [issuer.entry] } as never)).toThrow(
      /^createTestVerifier: registry is made from the issuers given, got an array: pass the issuers .*createVerifier\(\{ registry \}\)/,
    );
  });

  test('refuses two issuers sharing one iss, naming both places and the issuer option to set', async () => {
    const [first, second] = await Promise.all([createTestIssuer(), createTestIssuer()]);
    expect(() => createTestVerifier([first, second])).toThrow(
      /^createTestVerifier: issuers\[1\] has the iss of issuers\[0\], got "https:\/\/issuer\.test" for both: .*issuer option/,
    );
  });

  test('needs at least one issuer', () => {
    expect(() => createTestVerifier([])).toThrow(TypeError);
  });

  test('refuses a fetch that is not a function when it follows its issuers, naming the value found', async () => {
    const issuer = await createTestIssuer();
    expect(() => createTestVerifier(issuer, { fetch: 42 as unknown as typeof fetch })).toThrow(
      /^createTestVerifier: fetch must be a function, got 42$/,
    );
  });

  test('refuses a followIssuers that is not a boolean, naming it', async () => {
    const issuer = await createTestIssuer();
    expect(() => createTestVerifier(issuer, { followIssuers: 'yes' as unknown as boolean })).toThrow(/followIssuers must be a boolean/);
  });

  test('registers each issuer at its msw URL, whether or not it listens (the kit routes the download)', async () => {
    const issuer = await createTestIssuer();
    await issuer.listen();
    try {
      expect(createTestVerifier(issuer).registry.entries()[0]?.jwksUri).toBe('https://issuer.test/.well-known/jwks.json');
      expect(createTestVerifier(issuer, { followIssuers: false }).registry.entries()[0]?.jwksUri).toBe(issuer.entry.jwksUri);
    } finally {
      await issuer.close();
    }
  });

  test('takes an issuer-like object not made by createTestIssuer by its entry, as it is', () => {
    const entry = { issuer: 'https://other.test', jwksUri: 'https://other.test/jwks.json', products: ['acme'] };
    const verifier = createTestVerifier({ entry, audience: 'https://payments.test' } as unknown as TestIssuer);
    expect(verifier.registry.entries()).toEqual([entry]);
  });
});
