import { constants, createHash, generateKeyPairSync, privateEncrypt, sign, verify, type KeyObject } from 'node:crypto';
import { beforeAll, describe, expect, test } from 'vitest';
import type { RsaAlgorithm } from '../../src/core/jose-header.js';
import type { RsaPublicJwk } from '../../src/core/jwk.js';
import { type PreparedKey, type SignatureEngine, createSignatureEngine } from '../../src/core/signature.js';

const HASH = { RS256: 'sha256', RS384: 'sha384', RS512: 'sha512' } as const;
type Pkcs1Algorithm = keyof typeof HASH;

interface Pair {
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  readonly jwk: RsaPublicJwk;
}

function pair(publicExponent = 65537, modulusLength = 2048): Pair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength, publicExponent });
  const { n, e } = publicKey.export({ format: 'jwk' }) as { n: string; e: string };
  return { privateKey, publicKey, jwk: { kty: 'RSA', kid: 'k', n, e } as RsaPublicJwk };
}

const signingInput = (n: number): string =>
  `eyJhbGciOiJSUzI1NiJ9.${Buffer.from(JSON.stringify({ n, pad: 'x'.repeat(n % 97) })).toString('base64url')}`;

/** `value` as a big-endian unsigned integer of exactly `bytes` bytes. */
function toBytes(value: bigint, bytes: number): Uint8Array {
  return Uint8Array.from(Buffer.from(value.toString(16).padStart(bytes * 2, '0'), 'hex'));
}

const toBigInt = (bytes: Uint8Array): bigint => BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);

/** The integer cube root of `value`, rounded down. */
function cubeRoot(value: bigint): bigint {
  let low = 0n;
  let high = 1n << BigInt(Math.ceil(value.toString(2).length / 3) + 1);
  while (low < high) {
    const middle = (low + high + 1n) >> 1n;
    if (middle ** 3n <= value) low = middle;
    else high = middle - 1n;
  }
  return low;
}

/** `base ** exponent % modulus`. */
function modPow(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n;
  for (let b = base % modulus, e = exponent; e > 0n; e >>= 1n, b = (b * b) % modulus) if (e & 1n) result = (result * b) % modulus;
  return result;
}

/** The node engine's answer to a verification with none other in flight: at once, on this thread. */
async function verifyNow(
  engine: SignatureEngine,
  alg: RsaAlgorithm,
  key: PreparedKey,
  input: string,
  signature: Uint8Array,
): Promise<boolean> {
  const result = engine.verify(alg, key, input, signature, false);
  if (typeof result !== 'boolean') throw new Error('expected an answer at once');
  return result;
}

/** The node engine's answer to a verification started while others are in flight: from libuv's pool. */
async function verifyInPool(
  engine: SignatureEngine,
  alg: RsaAlgorithm,
  key: PreparedKey,
  input: string,
  signature: Uint8Array,
): Promise<boolean> {
  const result = engine.verify(alg, key, input, signature, true);
  if (!(result instanceof Promise)) throw new Error('expected an answer to come later');
  return result;
}

/** The WebCrypto engine's answer, with a key it imported itself. */
async function verifyWeb(jwk: RsaPublicJwk, alg: RsaAlgorithm, input: string, signature: Uint8Array): Promise<boolean> {
  const engine = createSignatureEngine('webcrypto');
  return engine.verify(alg, await engine.prepare(jwk), input, signature, false);
}

/** The EMSA-PKCS1-v1_5 encoding of `digest` (RFC 8017 §9.2) for a 256-byte modulus, to build attack signatures. */
function pkcs1Encoding(digest: Buffer): Buffer {
  const info = Buffer.from('3031300d060960864801650304020105000420', 'hex');
  return Buffer.concat([
    Buffer.from('0001', 'hex'),
    Buffer.alloc(256 - 3 - info.length - digest.length, 0xff),
    Buffer.alloc(1),
    info,
    digest,
  ]);
}

describe('EMSA-PKCS1-v1_5 encoding as the attack tests build it', () => {
  test('is what RSA signing with PKCS#1 v1.5 padding produces (opened with the public key)', () => {
    const keys = pair();
    const message = Buffer.from('message');
    const signature = sign('sha256', message, keys.privateKey);
    const opened = Buffer.from(toBytes(modPow(toBigInt(signature), 65537n, toBigInt(Buffer.from(keys.jwk.n, 'base64url'))), 256));
    expect(pkcs1Encoding(createHash('sha256').update(message).digest())).toEqual(opened);
  });
});

describe('node and WebCrypto signature engines agree with crypto.verify', () => {
  const engine = createSignatureEngine('node');
  let keys: Pair;
  let key: PreparedKey;

  beforeAll(async () => {
    keys = pair();
    key = await engine.prepare(keys.jwk);
  });

  test("the prepared key is the JWK's key, with the same modulus and exponent, and knows its modulus length", () => {
    const prepared = key.handle as KeyObject;
    expect(key.modulusBytes).toBe(256);
    expect(prepared.equals(keys.publicKey)).toBe(true);
    expect(prepared.export({ format: 'jwk' })).toEqual({ kty: 'RSA', n: keys.jwk.n, e: keys.jwk.e });
  });

  test.each(Object.keys(HASH) as Pkcs1Algorithm[])(
    "%s: valid signatures verify at once, in libuv's pool and through WebCrypto",
    async (alg) => {
      for (let n = 0; n < 20; n += 1) {
        const input = signingInput(n);
        const signature = sign(HASH[alg], Buffer.from(input), keys.privateKey);
        expect(await verifyNow(engine, alg, key, input, signature)).toBe(true);
        expect(await verifyInPool(engine, alg, key, input, signature)).toBe(true);
        if (n < 3) expect(await verifyWeb(keys.jwk, alg, input, signature)).toBe(true);
      }
    },
  );

  test.each(Object.keys(HASH) as Pkcs1Algorithm[])(
    '%s: every single-bit change of the signature or the signing input is refused, as crypto.verify refuses it',
    async (alg) => {
      const input = signingInput(7);
      const signature = sign(HASH[alg], Buffer.from(input), keys.privateKey);
      for (let bit = 0; bit < signature.length * 8; bit += 61) {
        const altered = Uint8Array.from(signature);
        altered[bit >> 3] = (altered[bit >> 3] as number) ^ (1 << (bit & 7));
        expect(verify(HASH[alg], Buffer.from(input), keys.publicKey, altered)).toBe(false);
        expect(await verifyNow(engine, alg, key, input, altered)).toBe(false);
        expect(await verifyInPool(engine, alg, key, input, altered)).toBe(false);
      }
      for (let index = 0; index < input.length; index += 13) {
        const altered = `${input.slice(0, index)}${input[index] === 'A' ? 'B' : 'A'}${input.slice(index + 1)}`;
        expect(await verifyNow(engine, alg, key, altered, signature)).toBe(false);
        expect(await verifyInPool(engine, alg, key, altered, signature)).toBe(false);
      }
    },
  );

  test('a signature made with another hash is refused (RS256 signature checked as RS384)', async () => {
    const input = signingInput(1);
    const signature = sign('sha256', Buffer.from(input), keys.privateKey);
    expect(await verifyNow(engine, 'RS384', key, input, signature)).toBe(false);
    expect(await verifyInPool(engine, 'RS384', key, input, signature)).toBe(false);
    expect(await verifyWeb(keys.jwk, 'RS384', input, signature)).toBe(false);
  });

  test('a signature shorter or longer than the modulus is refused, even when it denotes the same number', async () => {
    let n = 100;
    let input = signingInput(n);
    let signature = sign('sha256', Buffer.from(input), keys.privateKey);
    while (signature[0] !== 0) {
      n += 1;
      input = signingInput(n);
      signature = sign('sha256', Buffer.from(input), keys.privateKey);
    }
    const variants = {
      'its leading zero dropped': signature.subarray(1),
      'a zero prepended': Buffer.concat([Buffer.alloc(1), signature]),
      empty: new Uint8Array(0),
    };
    for (const [name, variant] of Object.entries(variants)) {
      expect(verify('sha256', Buffer.from(input), keys.publicKey, variant), name).toBe(false);
      expect(await verifyNow(engine, 'RS256', key, input, variant), name).toBe(false);
      expect(await verifyInPool(engine, 'RS256', key, input, variant), name).toBe(false);
      expect(await verifyWeb(keys.jwk, 'RS256', input, variant), name).toBe(false);
    }
    expect(await verifyNow(engine, 'RS256', key, input, signature)).toBe(true);
  });

  test('a signature not below the modulus (the modulus itself, or all ones) is refused, not thrown', async () => {
    const input = signingInput(3);
    const modulus = Buffer.from(keys.jwk.n, 'base64url');
    expect(await verifyNow(engine, 'RS256', key, input, modulus)).toBe(false);
    expect(await verifyNow(engine, 'RS256', key, input, new Uint8Array(256).fill(0xff))).toBe(false);
    expect(await verifyInPool(engine, 'RS256', key, input, modulus)).toBe(false);
    expect(await verifyWeb(keys.jwk, 'RS256', input, new Uint8Array(256).fill(0xff))).toBe(false);
  });

  test('encodings a lenient parser accepts are refused, as crypto.verify refuses them (signed with the private key, raw)', async () => {
    const input = signingInput(4);
    const digest = createHash('sha256').update(input).digest();
    const correct = pkcs1Encoding(digest);
    const sha256Info = '3031300d060960864801650304020105000420';
    const variants: Record<string, Buffer> = {
      // DigestInfo without the NULL parameters (some libraries accept it).
      'absent NULL parameters': Buffer.concat([
        Buffer.from('0001', 'hex'),
        Buffer.alloc(256 - 3 - 17 - 32, 0xff),
        Buffer.from('00302f300b0609608648016503040201' + '0420', 'hex'),
        digest,
      ]),
      // The digest followed by garbage, the padding shortened to make room.
      'garbage after the digest': Buffer.concat([
        Buffer.from('0001ffffffffffffffff00', 'hex'),
        Buffer.from(sha256Info, 'hex'),
        digest,
        Buffer.alloc(256 - 11 - 19 - 32, 0x42),
      ]),
      // Block type 2 (encryption padding) instead of 1.
      'block type 2': Buffer.concat([Buffer.from('0002', 'hex'), correct.subarray(2)]),
      // A zero byte inside the padding string.
      'a zero inside the padding': Buffer.concat([correct.subarray(0, 10), Buffer.from('00', 'hex'), correct.subarray(11)]),
    };
    for (const [name, encoded] of Object.entries(variants)) {
      expect(encoded.length, name).toBe(256);
      const signature = privateEncrypt({ key: keys.privateKey, padding: constants.RSA_NO_PADDING }, encoded);
      expect(verify('sha256', Buffer.from(input), keys.publicKey, signature), name).toBe(false);
      expect(await verifyNow(engine, 'RS256', key, input, signature), name).toBe(false);
      expect(await verifyInPool(engine, 'RS256', key, input, signature), name).toBe(false);
      expect(await verifyWeb(keys.jwk, 'RS256', input, signature), name).toBe(false);
    }
    const control = privateEncrypt({ key: keys.privateKey, padding: constants.RSA_NO_PADDING }, correct);
    expect(await verifyNow(engine, 'RS256', key, input, control)).toBe(true);
  });

  test('PS256 verifies, and a PKCS#1 v1.5 signature is refused as PS256', async () => {
    const input = signingInput(5);
    const pss = sign('sha256', Buffer.from(input), {
      key: keys.privateKey,
      padding: constants.RSA_PKCS1_PSS_PADDING,
      saltLength: 32,
    });
    expect(await verifyNow(engine, 'PS256', key, input, pss)).toBe(true);
    expect(await verifyInPool(engine, 'PS256', key, input, pss)).toBe(true);
    expect(await verifyWeb(keys.jwk, 'PS256', input, pss)).toBe(true);
    expect(await verifyNow(engine, 'PS256', key, input, sign('sha256', Buffer.from(input), keys.privateKey))).toBe(false);
  });
});

describe('node signature engine: the Bleichenbacher forgery for e = 3 keys (garbage after the digest) is refused', () => {
  test('a cube root whose cube starts with a valid encoding prefix passes a lenient parser but not this engine', async () => {
    const engine = createSignatureEngine('node');
    const keys = pair(3);
    const key = await engine.prepare(keys.jwk);
    const input = signingInput(6);
    const digest = createHash('sha256').update(input).digest();
    // 00 01 FF 00 DigestInfo digest, then garbage: the cube of the forged signature reproduces the
    // leading bytes (a lenient parser stops reading after the digest) without the private key.
    const head = Buffer.concat([Buffer.from('0001ff00', 'hex'), Buffer.from('3031300d060960864801650304020105000420', 'hex'), digest]);
    const target = toBigInt(Buffer.concat([head, Buffer.alloc(256 - head.length, 0xff)]));
    const forged = cubeRoot(target);
    const cube = toBytes(forged ** 3n, 256);
    expect(Buffer.from(cube.subarray(0, head.length))).toEqual(head);
    const signature = toBytes(forged, 256);
    expect(verify('sha256', Buffer.from(input), keys.publicKey, signature)).toBe(false);
    expect(await verifyNow(engine, 'RS256', key, input, signature)).toBe(false);
    expect(await verifyInPool(engine, 'RS256', key, input, signature)).toBe(false);
    expect(await verifyWeb(keys.jwk, 'RS256', input, signature)).toBe(false);
  });
});
