/**
 * Rotation, pre-publication, promotion and retirement with the kit's verifier, which sees every
 * change to its issuers' JWKS before its next verification; and the same changes under the
 * production rules (`followIssuers: false`), for contrast.
 */
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { type VerifierEvent, createVerifier } from '../../src/index.js';
import { type TestIssuer, createTestIssuer, createTestVerifier } from '../../src/testing/index.js';

const kidOf = (token: string): unknown => JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString()).kid;

describe('rotate() with the kit verifier', () => {
  let issuer: TestIssuer;
  beforeAll(async () => {
    issuer = await createTestIssuer();
    await issuer.listen();
  });
  afterAll(() => issuer.close());

  test("two rotations in a row: the newest key's tokens verify at once", async () => {
    const verifier = createTestVerifier(issuer);
    await expect(verifier.verify(await issuer.token())).resolves.toBeDefined();
    await issuer.rotate();
    await expect(verifier.verify(await issuer.token())).resolves.toBeDefined();
    await issuer.rotate();
    await expect(verifier.verify(await issuer.token())).resolves.toBeDefined();
  });

  test('under the production rules, the second rotation within the kid-miss cooldown gives unknown_key', async () => {
    const verifier = createTestVerifier(issuer, { followIssuers: false });
    await expect(verifier.verify(await issuer.token())).resolves.toBeDefined();
    await issuer.rotate();
    await expect(verifier.verify(await issuer.token())).resolves.toBeDefined();
    await issuer.rotate();
    await expect(verifier.verify(await issuer.token())).rejects.toMatchObject({ code: 'unknown_key', status: 401 });
  });

  test('many verifications racing a rotation share one reload', async () => {
    const verifier = createTestVerifier(issuer);
    await verifier.warmUp();
    const before = issuer.jwksRequests;
    await issuer.rotate();
    const token = await issuer.token();
    await Promise.all(Array.from({ length: 20 }, () => verifier.verify(token)));
    expect(issuer.jwksRequests).toBe(before + 1);
  });
});

describe('pre-publication and promotion', () => {
  let issuer: TestIssuer;
  beforeAll(async () => {
    issuer = await createTestIssuer();
    await issuer.listen();
  });
  afterAll(() => issuer.close());

  test('rotate({ publishOnly: true }) publishes a key that does not sign until promoted', async () => {
    const verifier = createTestVerifier(issuer);
    const signer = issuer.signingKey;
    const next = await issuer.rotate({ publishOnly: true });
    expect(issuer.jwks.keys.map((jwk) => jwk.kid)).toContain(next.kid);
    expect(kidOf(await issuer.token())).toBe(signer.kid);
    expect(issuer.promote(next)).toBe(next);
    const token = await issuer.token();
    expect(kidOf(token)).toBe(next.kid);
    await expect(verifier.verify(token)).resolves.toBeDefined();
  });

  test('a key published an hour before it signs is seen by a production verifier without a kid-miss refetch', async () => {
    let now = Date.UTC(2026, 0, 1);
    const clock = () => now;
    const timed = await createTestIssuer({ issuer: 'https://timed.test', now: clock });
    await timed.listen();
    try {
      const events: VerifierEvent[] = [];
      const verifier = createVerifier({
        registry: [timed.entry],
        audience: 'https://payments.test',
        now: clock,
        onEvent: (event) => events.push(event),
      });
      await expect(verifier.verify(await timed.token())).resolves.toBeDefined();
      const next = await timed.rotate({ publishOnly: true });
      now += 3_600_000;
      await verifier.warmUp();
      timed.promote(next);
      await expect(verifier.verify(await timed.token())).resolves.toBeDefined();
      const triggers = events.flatMap((event) => (event.type === 'jwks_fetch' ? [event.trigger] : []));
      expect(triggers).not.toContain('kid_miss');
      expect(triggers).toContain('warm_up');
    } finally {
      await timed.close();
    }
  });

  test('an addKey() key becomes the signer with promote(kid)', async () => {
    const verifier = createTestVerifier(issuer);
    await issuer.addKey({ kid: 'spare' });
    issuer.promote('spare');
    const token = await issuer.token();
    expect(kidOf(token)).toBe('spare');
    await expect(verifier.verify(token)).resolves.toBeDefined();
  });

  test('promote() refuses a kid the issuer does not have, naming it', () => {
    expect(() => issuer.promote('nobody')).toThrow(/promote: "nobody" is not a key of this issuer/);
  });

  test.each([
    ['null', null, /^promote: key must be a TestKey or the kid of a key of this issuer, got null$/],
    ['an object without a kid', {}, /^promote: key must be .*, got object$/],
  ])('promote() refuses %s, keeping the signing key, naming the value found', (_name, value, message) => {
    const before = issuer.signingKey;
    expect(() => issuer.promote(value as unknown as string)).toThrow(message);
    expect(issuer.signingKey).toBe(before);
  });

  test('rotate() refuses publishOnly with retire', async () => {
    await expect(issuer.rotate({ publishOnly: true, retire: true })).rejects.toThrow(TypeError);
  });
});

describe('retirement with the kit verifier', () => {
  let issuer: TestIssuer;
  beforeAll(async () => {
    issuer = await createTestIssuer();
    await issuer.listen();
  });
  afterAll(() => issuer.close());

  test("rotate({ retire: true }) stops the old key's tokens at once, cached results included", async () => {
    const verifier = createTestVerifier(issuer);
    const old = await issuer.token();
    await verifier.verify(old);
    await verifier.verify(old); // now in the result cache
    await issuer.rotate({ retire: true });
    await expect(verifier.verify(old)).rejects.toMatchObject({ code: 'unknown_key', status: 401 });
    await expect(verifier.verify(await issuer.token())).resolves.toBeDefined();
  });

  test('retire(kid) unpublishes that key; retire() every key but the signer', async () => {
    await issuer.addKey({ kid: 'a' });
    await issuer.addKey({ kid: 'b' });
    issuer.retire('a');
    expect(issuer.jwks.keys.map((jwk) => jwk.kid)).not.toContain('a');
    expect(issuer.jwks.keys.map((jwk) => jwk.kid)).toContain('b');
    issuer.retire();
    expect(issuer.jwks.keys.map((jwk) => jwk.kid)).toEqual([issuer.signingKey.kid]);
  });

  test('retire() refuses a TestKey given in place of its kid, keeping the JWKS, and says to pass key.kid', async () => {
    const spare = await issuer.addKey({ kid: 'spare-3' });
    const before = issuer.jwks.keys.map((jwk) => jwk.kid);
    expect(() => issuer.retire(spare as unknown as string)).toThrow(
      /^retire: kids\[0\] must be a kid \(a string\), got object: .*key\.kid/,
    );
    expect(issuer.jwks.keys.map((jwk) => jwk.kid)).toEqual(before);
  });

  test('unpublish() refuses a TestKey given in place of its kid, and says to pass key.kid', async () => {
    const spare = await issuer.addKey({ kid: 'spare-4' });
    expect(() => issuer.unpublish(spare as unknown as string)).toThrow(
      /^unpublish: kid must be a kid \(a string\), got object: .*key\.kid/,
    );
    expect(issuer.jwks.keys.map((jwk) => jwk.kid)).toContain('spare-4');
  });

  test('unpublish() takes effect at once too', async () => {
    const verifier = createTestVerifier(issuer);
    const spare = await issuer.addKey({ kid: 'spare-2' });
    const token = await issuer.token({}, {}, { key: spare });
    await expect(verifier.verify(token)).resolves.toBeDefined();
    issuer.unpublish('spare-2');
    await expect(verifier.verify(token)).rejects.toMatchObject({ code: 'unknown_key' });
  });
});

describe('listen() and the order of set-up', () => {
  test('a kit verifier built before listen() fetches from the loopback server', async () => {
    const issuer = await createTestIssuer();
    const verifier = createTestVerifier(issuer);
    const server = await issuer.listen();
    try {
      await expect(verifier.verify(await issuer.token())).resolves.toBeDefined();
      expect(server.requests).toBe(1);
    } finally {
      await issuer.close();
    }
  });

  test("a kit verifier fetches from the loopback server however the issuer's URL is spelt (a host in capitals)", async () => {
    // The verifier fetches the URL as `URL#href` writes it (`https://issuer.test/…`), not as given.
    const issuer = await createTestIssuer({ issuer: 'https://Issuer.Test' });
    const offLoopback: string[] = [];
    const loopbackOnly = (input: string, init: RequestInit) => {
      if (input.startsWith('http://127.0.0.1:')) return globalThis.fetch(input, init);
      offLoopback.push(input);
      return Promise.reject(new TypeError('fetch failed'));
    };
    const verifier = createTestVerifier(issuer, { fetch: loopbackOnly });
    const server = await issuer.listen();
    try {
      await expect(verifier.verify(await issuer.token())).resolves.toBeDefined();
      expect(offLoopback).toEqual([]);
      expect(server.requests).toBe(1);
    } finally {
      await issuer.close();
    }
  });

  test('a kit verifier with followIssuers: false built before listen() keeps the msw URL: 503 without msw, and the warning names followIssuers', async () => {
    const issuer = await createTestIssuer();
    const fetched: string[] = [];
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const verifier = createTestVerifier(issuer, {
        followIssuers: false,
        fetch: async (input: string | URL | Request) => {
          fetched.push(String(input instanceof Request ? input.url : input));
          throw new TypeError('no msw here');
        },
      });
      const server = await issuer.listen();
      await expect(verifier.verify(await issuer.token())).rejects.toMatchObject({
        code: 'jwks_unavailable',
        status: 503,
      });
      expect(fetched.length).toBeGreaterThan(0);
      expect(fetched.every((url) => !url.startsWith(server.url.replace(/\/[^/]*$/, '')))).toBe(true);
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('followIssuers: false'), {
        code: 'PAYGATE_AUTH_LISTEN_ORDER',
      });
    } finally {
      warn.mockRestore();
      await issuer.close();
    }
  });

  test('reading issuer.entry before listen() gets a warning that says what to do', async () => {
    const issuer = await createTestIssuer();
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      createVerifier({ registry: [issuer.entry], audience: 'https://payments.test' });
      await issuer.listen();
      expect(warn).toHaveBeenCalledWith(
        expect.stringMatching(/after listen\(\), or use createTestVerifier\(issuer\) without followIssuers: false/),
        { code: 'PAYGATE_AUTH_LISTEN_ORDER' },
      );
    } finally {
      warn.mockRestore();
      await issuer.close();
    }
  });

  test('no warning when the entry is read after listen()', async () => {
    const issuer = await createTestIssuer();
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      await issuer.listen();
      const verifier = createVerifier({ registry: [issuer.entry], audience: 'https://payments.test' });
      await expect(verifier.verify(await issuer.token())).resolves.toBeDefined();
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
      await issuer.close();
    }
  });

  test('no warning for a kit verifier that follows its issuer, built before listen()', async () => {
    const issuer = await createTestIssuer();
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const verifier = createTestVerifier(issuer);
      await issuer.listen();
      await expect(verifier.verify(await issuer.token())).resolves.toBeDefined();
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
      await issuer.close();
    }
  });

  test('close() serves the JWKS at its msw URL again', async () => {
    const issuer = await createTestIssuer();
    await issuer.listen();
    await issuer.close();
    expect(issuer.jwksUri).toBe('https://issuer.test/.well-known/jwks.json');
  });
});
