/**
 * RSA key pairs for tests, on `jose`: generated with `generateKeyPair`, published with `exportJWK`
 * (the `kid` defaults to the key's RFC 7638 thumbprint), and signing with `CompactSign`. For
 * malformed tokens, {@link signRawToken} also signs header and payload bytes exactly as given.
 */
import { describeValue, rejectUnknownOptions, optionNames } from '../internal/index.js';
import type { webcrypto } from 'node:crypto';
import {
  CompactSign,
  type CryptoKey,
  type GenerateKeyPairResult,
  base64url,
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
} from 'jose';

/** The members of {@link SignRawTokenOptions}: any other is refused, naming the nearest. */
const SIGN_RAW_TOKEN_OPTION_NAMES = optionNames<SignRawTokenOptions>({ alg: true });

/** The members of {@link TestKeyOptions}: any other is refused, naming the nearest. */
const TEST_KEY_OPTION_NAMES = optionNames<TestKeyOptions>({ kid: true, modulusLength: true, jwk: true });

/** The RSA JWS algorithms a test key can sign with. */
export type TestSigningAlgorithm = 'RS256' | 'RS384' | 'RS512' | 'PS256' | 'PS384' | 'PS512';

/** A published JWK, as the test issuer serves it (any member may be overridden for a test). */
export type PublishedJwk = Readonly<Record<string, unknown>> & { readonly kid: string };

/** A test key pair. */
export interface TestKey {
  readonly kid: string;
  /** Modulus size in bits. */
  readonly modulusLength: number;
  /** The public key as published in the JWKS. */
  readonly publicJwk: PublishedJwk;
  /** The private key (PKCS#8 DER): to sign tokens with, or to save and restore the key. */
  readonly privateKeyPkcs8: Uint8Array;
}

/** Options of {@link generateTestKey}. */
export interface TestKeyOptions {
  /**
   * The key's `kid`.
   * @default the RFC 7638 thumbprint of its public JWK (`calculateJwkThumbprint`)
   */
  readonly kid?: string | undefined;
  /**
   * Modulus size in bits. Below 2048 only to show that such keys are refused (`jose` will not
   * make or sign with them; the kit does, with WebCrypto).
   * @default 2048
   */
  readonly modulusLength?: number | undefined;
  /**
   * Members to set on (or, with `undefined`, remove from) the published JWK: `alg`, `use`, `kty`…
   * @default {} (the JWK carries `kty`, `n`, `e`, `kid`, `alg: 'RS256'`, `use: 'sig'`)
   */
  readonly jwk?: Readonly<Record<string, unknown>> | undefined;
}

/** Options of {@link signRawToken}. */
export interface SignRawTokenOptions {
  /**
   * The signature algorithm.
   * @default the header's `alg` when it is an RSA algorithm, else RS256 (so a header with `none`
   * or `HS256` still carries a real signature, to show it is refused before any key is used)
   */
  readonly alg?: TestSigningAlgorithm | undefined;
}

const SIGNING: Readonly<Record<TestSigningAlgorithm, { readonly name: string; readonly hash: string; readonly saltLength?: number }>> = {
  RS256: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
  RS384: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-384' },
  RS512: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-512' },
  PS256: { name: 'RSA-PSS', hash: 'SHA-256', saltLength: 32 },
  PS384: { name: 'RSA-PSS', hash: 'SHA-384', saltLength: 48 },
  PS512: { name: 'RSA-PSS', hash: 'SHA-512', saltLength: 64 },
};

/** The smallest modulus `jose` generates or signs with. */
const JOSE_MIN_MODULUS = 2048;

function subtle(): webcrypto.SubtleCrypto {
  const api = (globalThis as { crypto?: { subtle?: webcrypto.SubtleCrypto } }).crypto?.subtle;
  if (api === undefined) throw new TypeError('paygate-auth/testing needs globalThis.crypto.subtle');
  return api;
}

function isSigningAlgorithm(alg: unknown): alg is TestSigningAlgorithm {
  return typeof alg === 'string' && Object.hasOwn(SIGNING, alg);
}

function withMembers(base: Record<string, unknown>, members: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> {
  const result = { ...base };
  for (const [member, value] of Object.entries(members ?? {})) {
    if (value === undefined) delete result[member];
    else result[member] = value;
  }
  return result;
}

/** Private keys as JWKs, for `jose`, by key (restored keys are converted on first use). */
const privateJwks = new WeakMap<TestKey, Promise<Record<string, unknown>>>();

async function pairOf(modulusLength: number): Promise<GenerateKeyPairResult> {
  if (modulusLength >= JOSE_MIN_MODULUS) return generateKeyPair('RS256', { modulusLength, extractable: true });
  return (await subtle().generateKey(
    { name: 'RSASSA-PKCS1-v1_5', modulusLength, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
    true,
    ['sign', 'verify'],
  )) as GenerateKeyPairResult;
}

/** Generates a key pair and its published JWK. */
export async function generateTestKey(options: TestKeyOptions = {}): Promise<TestKey> {
  rejectUnknownOptions('generateTestKey', options, TEST_KEY_OPTION_NAMES);
  const modulusLength = options.modulusLength ?? 2048;
  if (!Number.isInteger(modulusLength) || modulusLength < 512)
    throw new TypeError(`generateTestKey: modulusLength must be an integer of at least 512, got ${describeValue(modulusLength)}`);
  if (options.kid !== undefined && (typeof options.kid !== 'string' || options.kid === '')) {
    throw new TypeError(`generateTestKey: kid must be a non-empty string, got ${describeValue(options.kid)}`);
  }
  const { jwk } = options;
  if (jwk !== undefined && (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk))) {
    throw new TypeError(
      `generateTestKey: jwk must be an object of JWK members to set (or, set to undefined, remove), got ${describeValue(jwk)}`,
    );
  }
  const pair = await pairOf(modulusLength);
  const { kty, n, e } = await exportJWK(pair.publicKey);
  const kid = options.kid ?? (await calculateJwkThumbprint({ kty: String(kty), n: String(n), e: String(e) }));
  const publicJwk = withMembers({ kty, n, e, kid, alg: 'RS256', use: 'sig' }, options.jwk);
  const privateKeyPkcs8 = new Uint8Array(await subtle().exportKey('pkcs8', pair.privateKey));
  const key: TestKey = { kid, modulusLength, publicJwk: Object.freeze({ ...publicJwk, kid }), privateKeyPkcs8 };
  privateJwks.set(key, exportJWK(pair.privateKey) as Promise<Record<string, unknown>>);
  return key;
}

/** `true` for a key as `generateTestKey()` or `addKey()` makes one: what `token()` and `signRawToken()` sign with. */
export function isTestKey(value: unknown): value is TestKey {
  if (typeof value !== 'object' || value === null) return false;
  const { kid, privateKeyPkcs8 } = value as Partial<TestKey>;
  return typeof kid === 'string' && kid !== '' && privateKeyPkcs8 instanceof Uint8Array;
}

/** The key's private JWK (no `alg`: `jose` imports it for whichever RSA algorithm signs). */
function privateJwkOf(key: TestKey): Promise<Record<string, unknown>> {
  let jwk = privateJwks.get(key);
  if (jwk === undefined) {
    jwk = subtle()
      .importKey('pkcs8', key.privateKeyPkcs8, SIGNING.RS256, true, ['sign'])
      .then((imported) => exportJWK(imported) as Promise<Record<string, unknown>>);
    privateJwks.set(key, jwk);
  }
  return jwk;
}

/** WebCrypto signing keys for {@link signRawToken}'s raw path, by key and algorithm. */
const rawSigningKeys = new WeakMap<TestKey, Map<TestSigningAlgorithm, Promise<CryptoKey>>>();

function rawSigningKey(key: TestKey, alg: TestSigningAlgorithm): Promise<CryptoKey> {
  let byAlg = rawSigningKeys.get(key);
  if (byAlg === undefined) {
    byAlg = new Map();
    rawSigningKeys.set(key, byAlg);
  }
  let imported = byAlg.get(alg);
  if (imported === undefined) {
    const { name, hash } = SIGNING[alg];
    imported = subtle().importKey('pkcs8', key.privateKeyPkcs8, { name, hash }, false, ['sign']);
    byAlg.set(alg, imported);
  }
  return imported;
}

const encoder = new TextEncoder();

function segmentBytes(value: unknown): Uint8Array {
  return value instanceof Uint8Array ? value : encoder.encode(JSON.stringify(value));
}

/**
 * Encodes a JOSE segment as base64url: a JSON value (serialized with `JSON.stringify`), or the
 * exact bytes given as a `Uint8Array`.
 */
export function encodeSegment(value: unknown): string {
  return base64url.encode(segmentBytes(value));
}

/** `true` when `jose` can sign this header as it stands: an RSA `alg`, nothing that changes its encoding. */
function joseSigns(key: TestKey, header: unknown, alg: TestSigningAlgorithm): header is Record<string, unknown> {
  if (key.modulusLength < JOSE_MIN_MODULUS) return false;
  if (typeof header !== 'object' || header === null || Array.isArray(header) || header instanceof Uint8Array) return false;
  const members = header as Record<string, unknown>;
  return members.alg === alg && !('crit' in members) && !('b64' in members);
}

/**
 * Signs a compact JWS with `key`. `header` and `payload` are JSON values or, as `Uint8Array`s, the
 * exact bytes of a segment (for malformed tokens: duplicate members, bad UTF-8, white space…).
 * A well-formed RSA header is signed by `jose`'s `CompactSign`; anything else (`alg: 'none'`,
 * `crit`, raw bytes, keys under 2048 bits) by WebCrypto over the same encoding.
 */
export async function signRawToken(key: TestKey, header: unknown, payload: unknown, options: SignRawTokenOptions = {}): Promise<string> {
  if (!isTestKey(key)) {
    throw new TypeError(
      `signRawToken: key must be a TestKey (from generateTestKey(), or issuer.signingKey, addKey(), rotate()), got ${describeValue(key)}`,
    );
  }
  rejectUnknownOptions('signRawToken', options, SIGN_RAW_TOKEN_OPTION_NAMES);
  const headerAlg = (header as { alg?: unknown } | null)?.alg;
  const alg: TestSigningAlgorithm = options.alg ?? (isSigningAlgorithm(headerAlg) ? headerAlg : 'RS256');
  if (!isSigningAlgorithm(alg)) {
    throw new TypeError(`signRawToken: alg must be one of ${Object.keys(SIGNING).join(', ')}, got ${describeValue(alg)}`);
  }
  if (joseSigns(key, header, alg)) {
    return new CompactSign(segmentBytes(payload)).setProtectedHeader(header as { alg: string }).sign(await privateJwkOf(key));
  }
  const signingInput = `${encodeSegment(header)}.${encodeSegment(payload)}`;
  const { name, saltLength } = SIGNING[alg];
  const parameters = saltLength === undefined ? { name } : { name, saltLength };
  const signature = await subtle().sign(parameters, await rawSigningKey(key, alg), encoder.encode(signingInput));
  return `${signingInput}.${base64url.encode(new Uint8Array(signature))}`;
}
