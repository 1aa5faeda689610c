/**
 * RSA signature verification over the exact received bytes (SPEC §3.5), with each key parsed once.
 *
 * Two engines:
 * - `node`: a prepared `KeyObject` and `crypto.verify`. A verification that is the first of its
 *   turn of the event loop, with none running in the pool, runs synchronously and answers at once
 *   (the fastest a single call can be); the others of a burst, and any while some are running, go
 *   to libuv's thread pool, so that the other cores work too.
 * - `webcrypto`: `crypto.subtle`, for runtimes without `node:crypto` (Workers, Deno, browsers).
 *
 * @module paygate-auth
 */
import type { webcrypto } from 'node:crypto';
import type { RsaAlgorithm } from './jose-header.js';
import type { RsaPublicJwk } from './jwk.js';

/** A key ready to verify: parsed once when its JWKS is loaded. */
export interface PreparedKey {
  readonly kid: string;
  readonly jwk: RsaPublicJwk;
  /** The engine's own handle (a `KeyObject`, or a cache of `CryptoKey`s by algorithm). */
  readonly handle: unknown;
}

/** Verifies signatures with keys it prepared itself. */
export interface SignatureEngine {
  readonly name: 'node' | 'webcrypto';
  prepare(jwk: RsaPublicJwk): Promise<PreparedKey>;
  /** `true` when the signature verifies: at once when it ran synchronously, else a promise. */
  verify(alg: RsaAlgorithm, key: PreparedKey, data: Uint8Array, signature: Uint8Array): boolean | Promise<boolean>;
}

interface AlgorithmParameters {
  readonly hash: 'sha256' | 'sha384' | 'sha512';
  readonly pss: boolean;
  readonly saltLength: number;
}

const PARAMETERS: Readonly<Record<RsaAlgorithm, AlgorithmParameters>> = {
  RS256: { hash: 'sha256', pss: false, saltLength: 0 },
  RS384: { hash: 'sha384', pss: false, saltLength: 0 },
  RS512: { hash: 'sha512', pss: false, saltLength: 0 },
  PS256: { hash: 'sha256', pss: true, saltLength: 32 },
  PS384: { hash: 'sha384', pss: true, saltLength: 48 },
  PS512: { hash: 'sha512', pss: true, saltLength: 64 },
};

// ---------------------------------------------------------------------------------------------
// node:crypto

type NodeCrypto = typeof import('node:crypto');
type NodeKeyObject = import('node:crypto').KeyObject;
type VerifyKey = NodeKeyObject | { key: NodeKeyObject; padding: number; saltLength: number };

function loadNodeCrypto(): NodeCrypto | undefined {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  return proc?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined;
}

/** Settled: `.then(fn)` schedules a microtask without the `AsyncResource` `queueMicrotask` makes per call. */
const SETTLED = Promise.resolve();

function createNodeEngine(nodeCrypto: NodeCrypto): SignatureEngine {
  /** Verifications in the thread pool now. */
  let running = 0;
  /** Verifications asked for since the last microtask checkpoint: more than one is a burst. */
  let thisTurn = 0;
  const endTurn = (): void => {
    thisTurn = 0;
  };

  const verifyHere = (hash: string, data: Uint8Array, key: VerifyKey, signature: Uint8Array): boolean => {
    try {
      return nodeCrypto.verify(hash, data, key, signature);
    } catch {
      return false;
    }
  };

  const verifyInPool = (hash: string, data: Uint8Array, key: VerifyKey, signature: Uint8Array): Promise<boolean> =>
    new Promise<boolean>((resolve) => {
      running += 1;
      try {
        nodeCrypto.verify(hash, data, key, signature, (error, valid) => {
          running -= 1;
          resolve(error === null && valid);
        });
      } catch {
        running -= 1;
        resolve(false);
      }
    });

  return {
    name: 'node',
    async prepare(jwk) {
      const handle = nodeCrypto.createPublicKey({ key: { kty: 'RSA', n: jwk.n, e: jwk.e }, format: 'jwk' });
      return { kid: jwk.kid, jwk, handle };
    },
    verify(alg, key, data, signature) {
      const parameters = PARAMETERS[alg];
      const keyObject = key.handle as NodeKeyObject;
      const verifyKey: VerifyKey = parameters.pss
        ? { key: keyObject, padding: nodeCrypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: parameters.saltLength }
        : keyObject;
      if (thisTurn++ === 0) void SETTLED.then(endTurn);
      return thisTurn === 1 && running === 0
        ? verifyHere(parameters.hash, data, verifyKey, signature)
        : verifyInPool(parameters.hash, data, verifyKey, signature);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// WebCrypto

const WEB_HASH = { sha256: 'SHA-256', sha384: 'SHA-384', sha512: 'SHA-512' } as const;

function createWebCryptoEngine(subtle: webcrypto.SubtleCrypto): SignatureEngine {
  const importFor = (jwk: RsaPublicJwk, parameters: AlgorithmParameters): Promise<webcrypto.CryptoKey> =>
    subtle.importKey(
      'jwk',
      { kty: 'RSA', n: jwk.n, e: jwk.e, ext: true },
      { name: parameters.pss ? 'RSA-PSS' : 'RSASSA-PKCS1-v1_5', hash: WEB_HASH[parameters.hash] },
      false,
      ['verify'],
    );

  return {
    name: 'webcrypto',
    async prepare(jwk) {
      const byAlgorithm = new Map<RsaAlgorithm, Promise<webcrypto.CryptoKey>>();
      // Import for the key's own algorithm now, so a bad key fails at load time, not per request.
      const alg = (jwk.alg as RsaAlgorithm | undefined) ?? 'RS256';
      byAlgorithm.set(alg, importFor(jwk, PARAMETERS[alg]));
      await byAlgorithm.get(alg);
      return { kid: jwk.kid, jwk, handle: byAlgorithm };
    },
    async verify(alg, key, data, signature) {
      const byAlgorithm = key.handle as Map<RsaAlgorithm, Promise<webcrypto.CryptoKey>>;
      const parameters = PARAMETERS[alg];
      let cryptoKey = byAlgorithm.get(alg);
      if (cryptoKey === undefined) {
        cryptoKey = importFor(key.jwk, parameters);
        byAlgorithm.set(alg, cryptoKey);
      }
      try {
        const algorithm = parameters.pss ? { name: 'RSA-PSS', saltLength: parameters.saltLength } : { name: 'RSASSA-PKCS1-v1_5' };
        return await subtle.verify(algorithm, await cryptoKey, signature, data);
      } catch {
        return false;
      }
    },
  };
}

let nodeEngine: SignatureEngine | undefined;
let webEngine: SignatureEngine | undefined;

/** Which engine verifies signatures. */
export type SignatureEngineName = 'node' | 'webcrypto';

/** `node` where `node:crypto` is reachable, `webcrypto` elsewhere. */
export function defaultEngineName(): SignatureEngineName {
  return loadNodeCrypto() ? 'node' : 'webcrypto';
}

/**
 * The engine called `name`.
 * @throws {TypeError} when this runtime lacks it.
 */
export function signatureEngine(name: SignatureEngineName = defaultEngineName()): SignatureEngine {
  if (name === 'node') {
    const nodeCrypto = loadNodeCrypto();
    if (!nodeCrypto) throw new TypeError('crypto: "node" needs node:crypto, which this runtime lacks; use "webcrypto"');
    nodeEngine ??= createNodeEngine(nodeCrypto);
    return nodeEngine;
  }
  const subtle = (globalThis as { crypto?: { subtle?: webcrypto.SubtleCrypto } }).crypto?.subtle;
  if (!subtle) throw new TypeError('crypto: "webcrypto" needs globalThis.crypto.subtle, which this runtime lacks');
  webEngine ??= createWebCryptoEngine(subtle);
  return webEngine;
}
