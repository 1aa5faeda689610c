/**
 * RSA signature verification over the exact received bytes, with each key imported once. One
 * engine per runtime, picked when a verifier is built:
 * - `node`: `crypto.verify` with a `KeyObject`. A verification with none other in flight runs at
 *   once, on this thread (the fewest instructions: no hand-over to another thread); one started
 *   while others are in flight uses `crypto.verify`'s callback form, which runs in libuv's thread
 *   pool, so that the other cores work too.
 * - `webcrypto`: `crypto.subtle.verify`, with keys imported by jose's `importJWK`, for runtimes
 *   without `node:crypto` (Workers, Deno, browsers).
 *
 * A signature whose length is not the modulus's is refused by the verifier before it gets here.
 */
import type { KeyObject, webcrypto } from 'node:crypto';
import { importJWK } from 'jose/key/import';
import { asciiBytes } from './base64url.js';
import type { RsaAlgorithm } from './jose-header.js';
import type { RsaPublicJwk } from './jwk.js';
import { type NodeCrypto, loadNodeCrypto } from './node-crypto.js';

/** Which engine verifies signatures. */
export type SignatureEngineName = 'node' | 'webcrypto';

/** A key ready to verify: imported once when its JWKS is loaded. */
export interface PreparedKey {
  readonly kid: string;
  readonly jwk: RsaPublicJwk;
  /** Bytes of the modulus: every signature must be exactly this long (RFC 8017 §8.2.2). */
  readonly modulusBytes: number;
  /** The engine's own handle (a `KeyObject`, or `CryptoKey`s by algorithm). */
  readonly handle: unknown;
}

/** Verifies signatures with keys it imported itself. */
export interface SignatureEngine {
  readonly name: SignatureEngineName;
  /** @throws when the runtime cannot import the key. */
  prepare(jwk: RsaPublicJwk): Promise<PreparedKey>;
  /**
   * Whether `signature` verifies over `signingInput` (ASCII: the token up to its second dot); at
   * once when it ran on this thread, else a promise. Never throws or rejects.
   * @param concurrent whether other verifications are in flight (so that this one may run on
   *   another thread)
   */
  verify(alg: RsaAlgorithm, key: PreparedKey, signingInput: string, signature: Uint8Array, concurrent: boolean): boolean | Promise<boolean>;
}

const HASH: Readonly<Record<RsaAlgorithm, 'sha256' | 'sha384' | 'sha512'>> = {
  RS256: 'sha256',
  RS384: 'sha384',
  RS512: 'sha512',
  PS256: 'sha256',
  PS384: 'sha384',
  PS512: 'sha512',
};

/** PSS salt lengths (the hash's length, RFC 7518 §3.5); absent for PKCS#1 v1.5. */
const SALT: Readonly<Partial<Record<RsaAlgorithm, number>>> = { PS256: 32, PS384: 48, PS512: 64 };

function createNodeEngine(nodeCrypto: NodeCrypto): SignatureEngine {
  const pss = nodeCrypto.constants.RSA_PKCS1_PSS_PADDING;

  return {
    name: 'node',
    async prepare(jwk) {
      // Imported again from its SPKI DER: OpenSSL holds a key read from a JWK in its legacy form,
      // and looks its algorithm up by name on every verification (about 1,500 instructions).
      const fromJwk = nodeCrypto.createPublicKey({ key: { kty: 'RSA', n: jwk.n, e: jwk.e }, format: 'jwk' });
      const keyObject = nodeCrypto.createPublicKey({
        key: fromJwk.export({ type: 'spki', format: 'der' }),
        format: 'der',
        type: 'spki',
      });
      const bits = keyObject.asymmetricKeyDetails?.modulusLength ?? 0;
      return { kid: jwk.kid, jwk, modulusBytes: Math.ceil(bits / 8), handle: keyObject };
    },
    verify(alg, key, signingInput, signature, concurrent) {
      const keyObject = key.handle as KeyObject;
      const saltLength = SALT[alg];
      const verifyKey = saltLength === undefined ? keyObject : { key: keyObject, padding: pss, saltLength };
      const data = asciiBytes(signingInput);
      if (!concurrent) {
        try {
          return nodeCrypto.verify(HASH[alg], data, verifyKey, signature);
        } catch {
          return false;
        }
      }
      return new Promise<boolean>((resolve) => {
        try {
          nodeCrypto.verify(HASH[alg], data, verifyKey, signature, (error, valid) => resolve(error === null && valid));
        } catch {
          resolve(false);
        }
      });
    },
  };
}

function createWebCryptoEngine(subtle: webcrypto.SubtleCrypto): SignatureEngine {
  type CryptoKeys = Map<RsaAlgorithm, Promise<webcrypto.CryptoKey>>;
  const importFor = (jwk: RsaPublicJwk, alg: RsaAlgorithm): Promise<webcrypto.CryptoKey> =>
    importJWK({ kty: 'RSA', n: jwk.n, e: jwk.e }, alg) as Promise<webcrypto.CryptoKey>;

  return {
    name: 'webcrypto',
    async prepare(jwk) {
      // Imported for the key's own algorithm now, so that a bad key fails when loaded, not per token.
      const alg = (jwk.alg as RsaAlgorithm | undefined) ?? 'RS256';
      const first = importFor(jwk, alg);
      const cryptoKey = await first;
      const bits = (cryptoKey.algorithm as webcrypto.RsaHashedKeyAlgorithm).modulusLength;
      const keys: CryptoKeys = new Map([[alg, first]]);
      return { kid: jwk.kid, jwk, modulusBytes: Math.ceil(bits / 8), handle: keys };
    },
    async verify(alg, key, signingInput, signature) {
      const keys = key.handle as CryptoKeys;
      let cryptoKey = keys.get(alg);
      if (cryptoKey === undefined) {
        cryptoKey = importFor(key.jwk, alg);
        keys.set(alg, cryptoKey);
      }
      const saltLength = SALT[alg];
      const algorithm = saltLength === undefined ? { name: 'RSASSA-PKCS1-v1_5' } : { name: 'RSA-PSS', saltLength };
      try {
        return await subtle.verify(algorithm, await cryptoKey, signature, asciiBytes(signingInput));
      } catch {
        return false;
      }
    },
  };
}

/** `node` where `node:crypto` is reachable, `webcrypto` elsewhere. */
export function defaultEngineName(): SignatureEngineName {
  return loadNodeCrypto() === undefined ? 'webcrypto' : 'node';
}

/**
 * A new engine called `name` (each verifier builds its own).
 * @throws {TypeError} when this runtime lacks it.
 */
export function createSignatureEngine(name: SignatureEngineName = defaultEngineName()): SignatureEngine {
  if (name === 'node') {
    const nodeCrypto = loadNodeCrypto();
    if (nodeCrypto === undefined) throw new TypeError('crypto: "node" needs node:crypto, which this runtime lacks; use "webcrypto"');
    return createNodeEngine(nodeCrypto);
  }
  const subtle = (globalThis as { crypto?: { subtle?: webcrypto.SubtleCrypto } }).crypto?.subtle;
  if (subtle === undefined) throw new TypeError('crypto: "webcrypto" needs globalThis.crypto.subtle, which this runtime lacks');
  return createWebCryptoEngine(subtle);
}
