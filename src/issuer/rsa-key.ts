/**
 * RS256 key pairs, through `jose` and WebCrypto: generation, the public JWK as published (its
 * `kid` is the key's RFC 7638 thumbprint), and signing.
 */
import { base64url, calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import { MIN_MODULUS_BITS, type RsaPublicJwk } from '../index.js';
import { describeValue } from '../internal/index.js';

/**
 * A WebCrypto key, as the runtime's own types name it (Node's, or a Worker's): the declarations
 * import no type from jose, which a CommonJS project could not (jose is ESM-only).
 */
export type CryptoKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

/** A fresh key pair: the private key as a `CryptoKey`, the public half as published. */
export interface GeneratedKeyPair {
  readonly privateKey: CryptoKey;
  readonly publicJwk: RsaPublicJwk;
}

/** Checks a modulus length option. @throws {TypeError} naming `name`. */
export function checkModulusLength(name: string, value: unknown): number {
  if (value === undefined) return MIN_MODULUS_BITS;
  if (value !== 2048 && value !== 3072 && value !== 4096)
    throw new TypeError(`${name} must be 2048, 3072 or 4096 (bits), got ${describeValue(value)}`);
  return value;
}

/** The size of a public JWK's modulus, in bits (its `n` without leading zero bits). */
export function modulusBits(jwk: Pick<RsaPublicJwk, 'n'>): number {
  const bytes = base64url.decode(jwk.n);
  const first = bytes.findIndex((byte) => byte !== 0);
  return first < 0 ? 0 : (bytes.length - first) * 8 - Math.clz32(bytes[first] as number) + 24;
}

/** The published form of an RSA public key; `kid` is its RFC 7638 SHA-256 thumbprint. */
export async function publicJwkOf(publicKey: CryptoKey): Promise<RsaPublicJwk> {
  const { n, e } = await exportJWK(publicKey);
  if (typeof n !== 'string' || typeof e !== 'string') throw new TypeError('The key is not an RSA key');
  const kid = await calculateJwkThumbprint({ kty: 'RSA', n, e }, 'sha256');
  return Object.freeze({ kty: 'RSA', n, e, kid, alg: 'RS256', use: 'sig' });
}

/**
 * Generates an RS256 key pair. `extractable` lets the private key be exported (to write it to a
 * file); a store that only keeps it in memory leaves it `false`.
 */
export async function generateRsaKeyPair(
  options: { readonly modulusLength?: number; readonly extractable?: boolean } = {},
): Promise<GeneratedKeyPair> {
  const modulusLength = checkModulusLength('modulusLength', options.modulusLength);
  const pair = await generateKeyPair('RS256', { modulusLength, extractable: options.extractable ?? false });
  return { privateKey: pair.privateKey, publicJwk: await publicJwkOf(pair.publicKey) };
}

/** RSASSA-PKCS1-v1_5 with SHA-256 (RS256) over `data`. */
export async function signRs256(privateKey: CryptoKey, data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign('RSASSA-PKCS1-v1_5', privateKey, data));
}
