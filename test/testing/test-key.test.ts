import { calculateJwkThumbprint, compactVerify, decodeProtectedHeader, importJWK } from 'jose';
import { describe, expect, test } from 'vitest';
import { encodeSegment, generateTestKey, signRawToken } from '../../src/testing/index.js';

const segment = (token: string, index: number): string => Buffer.from(token.split('.')[index] ?? '', 'base64url').toString('utf8');

describe('generateTestKey', () => {
  test('names a key by its RFC 7638 thumbprint when no kid is given', async () => {
    const key = await generateTestKey();
    const { kty, n, e } = key.publicJwk;
    expect(key.kid).toBe(await calculateJwkThumbprint({ kty: String(kty), n: String(n), e: String(e) }));
    expect(key.publicJwk.kid).toBe(key.kid);
  });

  test.each([
    [
      'a modulusLength given as a string',
      { modulusLength: '2048' },
      /^generateTestKey: modulusLength must be an integer of at least 512, got "2048"$/,
    ],
    ['a kid that is a number', { kid: 7 }, /^generateTestKey: kid must be a non-empty string, got 7$/],
    ['a jwk that is a string', { jwk: 'alg' }, /^generateTestKey: jwk must be an object of JWK members .*, got "alg"$/],
  ])('refuses %s, naming the value found', async (_name, options, message) => {
    await expect(generateTestKey(options as never)).rejects.toThrow(message);
  });

  test('keeps a kid that is given', async () => {
    expect((await generateTestKey({ kid: 'k-1' })).publicJwk.kid).toBe('k-1');
  });

  test('publishes the public members only, for RS256 signatures', async () => {
    const { publicJwk } = await generateTestKey({ kid: 'k-1' });
    expect(Object.keys(publicJwk).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
    expect(publicJwk).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', e: 'AQAB' });
  });

  test('makes a 1024-bit key, which jose refuses to make, to show that such keys are refused', async () => {
    const key = await generateTestKey({ kid: 'weak', modulusLength: 1024 });
    expect(Buffer.from(String(key.publicJwk.n), 'base64url')).toHaveLength(128);
  });

  test.each([
    ['an empty kid', { kid: '' }, /kid must be a non-empty string/],
    ['a fractional modulus', { modulusLength: 2048.5 }, /modulusLength must be an integer/],
  ])('refuses %s with a TypeError naming the option', async (_name, options, message) => {
    await expect(generateTestKey(options)).rejects.toThrow(message);
  });
});

describe('signRawToken', () => {
  test('refuses a key that is not a TestKey, naming the value found, before anything is signed', async () => {
    await expect(signRawToken(undefined as never, { alg: 'RS256' }, {})).rejects.toThrow(
      /^signRawToken: key must be a TestKey \(.*\), got undefined$/,
    );
    await expect(signRawToken({ kid: 'k-1' } as never, { alg: 'RS256' }, {})).rejects.toThrow(/^signRawToken: key must be a TestKey/);
  });

  test.each(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'] as const)(
    'signs %s tokens that jose verifies with the public JWK',
    async (alg) => {
      const key = await generateTestKey({ kid: 'k-1' });
      const token = await signRawToken(key, { alg, kid: 'k-1' }, { sub: 'x' });
      const publicKey = await importJWK({ ...key.publicJwk, alg: undefined, use: undefined }, alg);
      const { payload, protectedHeader } = await compactVerify(token, publicKey, { algorithms: [alg] });
      expect(protectedHeader).toEqual({ alg, kid: 'k-1' });
      expect(JSON.parse(new TextDecoder().decode(payload))).toEqual({ sub: 'x' });
    },
  );

  test('refuses an alg option it cannot sign with, naming the value found', async () => {
    const key = await generateTestKey({ kid: 'k-1' });
    await expect(signRawToken(key, { alg: 'RS256' }, {}, { alg: 'ES256' as never })).rejects.toThrow(
      /^signRawToken: alg must be one of RS256, RS384, RS512, PS256, PS384, PS512, got "ES256"$/,
    );
  });

  test('encodes header and payload bytes exactly as given (a duplicate member, for attack tests)', async () => {
    const key = await generateTestKey({ kid: 'k-1' });
    const header = new TextEncoder().encode('{"alg":"RS256","kid":"k-1","kid":"other"}');
    const token = await signRawToken(key, header, { sub: 'x' });
    expect(segment(token, 0)).toBe('{"alg":"RS256","kid":"k-1","kid":"other"}');
    const publicKey = await importJWK({ ...key.publicJwk, alg: undefined, use: undefined }, 'RS256');
    await expect(compactVerify(token, publicKey)).resolves.toBeDefined();
  });

  test('writes a header with alg none or HS256 as given, over a real RS256 signature', async () => {
    const key = await generateTestKey({ kid: 'k-1' });
    for (const alg of ['none', 'HS256']) {
      const token = await signRawToken(key, { alg, kid: 'k-1' }, { sub: 'x' });
      expect(decodeProtectedHeader(token)).toEqual({ alg, kid: 'k-1' });
      expect(Buffer.from(token.split('.')[2] ?? '', 'base64url')).toHaveLength(256);
    }
  });

  test('signs with a 1024-bit key, which jose will not sign with', async () => {
    const key = await generateTestKey({ kid: 'weak', modulusLength: 1024 });
    const token = await signRawToken(key, { alg: 'RS256', kid: 'weak' }, { sub: 'x' });
    expect(Buffer.from(token.split('.')[2] ?? '', 'base64url')).toHaveLength(128);
  });

  test('signs a header with crit, which jose would refuse to produce', async () => {
    const key = await generateTestKey({ kid: 'k-1' });
    const token = await signRawToken(key, { alg: 'RS256', kid: 'k-1', crit: ['exp'], exp: 1 }, { sub: 'x' });
    expect(decodeProtectedHeader(token)).toMatchObject({ crit: ['exp'] });
  });

  test('signs a key restored from its PKCS#8 bytes (a key saved to disk)', async () => {
    const { kid, modulusLength, publicJwk, privateKeyPkcs8 } = await generateTestKey({ kid: 'k-1' });
    const restored = { kid, modulusLength, publicJwk, privateKeyPkcs8: new Uint8Array(privateKeyPkcs8) };
    const token = await signRawToken(restored, { alg: 'RS256', kid }, { sub: 'x' });
    const publicKey = await importJWK({ ...publicJwk, alg: undefined, use: undefined }, 'RS256');
    await expect(compactVerify(token, publicKey)).resolves.toBeDefined();
  });
});

describe('encodeSegment', () => {
  test('base64url-encodes the JSON text of a value, without padding', () => {
    expect(encodeSegment({ a: 1 })).toBe(Buffer.from('{"a":1}').toString('base64url'));
  });

  test('base64url-encodes bytes as given', () => {
    expect(encodeSegment(new Uint8Array([0xff, 0xfe]))).toBe('__4');
  });
});
