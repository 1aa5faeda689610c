/**
 * RSA key pairs for tests: generated with WebCrypto, published as JWKs, able to sign as any RSA
 * JWS algorithm.
 *
 * @module paygate-auth/testing
 */
import type { webcrypto } from 'node:crypto';
import { encodeBase64Url } from '../core/base64url.js';
import type { RsaAlgorithm } from '../core/jose-header.js';

type CryptoKey = webcrypto.CryptoKey;

/** A published JWK, as the test issuer serves it (any member may be overridden for a test). */
export type PublishedJwk = Readonly<Record<string, unknown>> & { readonly kid: string };

/** A test key pair. */
export interface TestKey {
  readonly kid: string;
  readonly modulusLength: number;
  /** The public key as published in the JWKS. */
  readonly publicJwk: PublishedJwk;
  /** The private key (PKCS#8 DER), to sign tokens with. */
  readonly privateKeyPkcs8: Uint8Array;
}

/** Options of {@link generateTestKey}. */
export interface TestKeyOptions {
  readonly kid: string;
  /**
   * Modulus size in bits. Below 2048 only to show that such keys are refused.
   * @default 2048
   */
  readonly modulusLength?: number;
  /**
   * Members to set on (or, with `undefined`, remove from) the published JWK: `alg`, `use`, `kty`…
   * @default {} (the JWK carries `kty`, `n`, `e`, `kid`, `alg: 'RS256'`, `use: 'sig'`)
   */
  readonly jwk?: Readonly<Record<string, unknown>>;
}

function subtle(): webcrypto.SubtleCrypto {
  const api = (globalThis as { crypto?: { subtle?: webcrypto.SubtleCrypto } }).crypto?.subtle;
  if (!api) throw new TypeError('paygate-auth/testing needs globalThis.crypto.subtle');
  return api;
}

/** Generates a key pair and its published JWK. */
export async function generateTestKey(options: TestKeyOptions): Promise<TestKey> {
  const modulusLength = options.modulusLength ?? 2048;
  const pair = (await subtle().generateKey(
    { name: 'RSASSA-PKCS1-v1_5', modulusLength, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
    true,
    ['sign', 'verify'],
  )) as webcrypto.CryptoKeyPair;
  const exported = await subtle().exportKey('jwk', pair.publicKey);
  const base: Record<string, unknown> = { kty: 'RSA', n: exported.n, e: exported.e, kid: options.kid, alg: 'RS256', use: 'sig' };
  for (const [member, value] of Object.entries(options.jwk ?? {})) {
    if (value === undefined) delete base[member];
    else base[member] = value;
  }
  const privateKeyPkcs8 = new Uint8Array(await subtle().exportKey('pkcs8', pair.privateKey));
  return { kid: options.kid, modulusLength, publicJwk: Object.freeze({ ...base, kid: options.kid }), privateKeyPkcs8 };
}

const SIGNING: Readonly<Record<RsaAlgorithm, { name: string; hash: string; saltLength?: number }>> = {
  RS256: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
  RS384: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-384' },
  RS512: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-512' },
  PS256: { name: 'RSA-PSS', hash: 'SHA-256', saltLength: 32 },
  PS384: { name: 'RSA-PSS', hash: 'SHA-384', saltLength: 48 },
  PS512: { name: 'RSA-PSS', hash: 'SHA-512', saltLength: 64 },
};

const signingKeys = new WeakMap<TestKey, Map<RsaAlgorithm, Promise<CryptoKey>>>();

function signingKey(key: TestKey, alg: RsaAlgorithm): Promise<CryptoKey> {
  let byAlg = signingKeys.get(key);
  if (byAlg === undefined) {
    byAlg = new Map();
    signingKeys.set(key, byAlg);
  }
  let imported = byAlg.get(alg);
  if (imported === undefined) {
    const { name, hash } = SIGNING[alg];
    imported = subtle().importKey('pkcs8', key.privateKeyPkcs8, { name, hash }, false, ['sign']);
    byAlg.set(alg, imported);
  }
  return imported;
}

function isRsaAlgorithm(alg: unknown): alg is RsaAlgorithm {
  return typeof alg === 'string' && Object.hasOwn(SIGNING, alg);
}

const encoder = new TextEncoder();

/** Encodes a JSON value as base64url. */
export function encodeSegment(value: unknown): string {
  return encodeBase64Url(encoder.encode(JSON.stringify(value)));
}

/**
 * Signs a compact JWS with `key`. The header's `alg`, when it is an RSA algorithm, picks the
 * signature algorithm; any other `alg` (`none`, `HS256`…) is written as given over an RS256
 * signature, to test that such headers are refused before any key is used.
 */
export async function signCompact(key: TestKey, header: Readonly<Record<string, unknown>>, payload: unknown): Promise<string> {
  const signingInput = `${encodeSegment(header)}.${encodeSegment(payload)}`;
  const alg: RsaAlgorithm = isRsaAlgorithm(header.alg) ? header.alg : 'RS256';
  const { name, saltLength } = SIGNING[alg];
  const parameters = saltLength === undefined ? { name } : { name, saltLength };
  const signature = await subtle().sign(parameters, await signingKey(key, alg), encoder.encode(signingInput));
  return `${signingInput}.${encodeBase64Url(new Uint8Array(signature))}`;
}
