/**
 * RSA signature verification over the exact received bytes (SPEC §3.5), with each key parsed once.
 *
 * Two engines:
 * - `node`: a prepared `KeyObject` and `crypto.verify`. A verification that is alone runs
 *   synchronously (the fastest a single call can be); when several are waiting in the same turn of
 *   the event loop, or some are already running, they go to libuv's thread pool, so the other cores
 *   work too.
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
  verify(alg: RsaAlgorithm, key: PreparedKey, data: Uint8Array, signature: Uint8Array): Promise<boolean>;
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

interface Job {
  readonly hash: string;
  readonly key: VerifyKey;
  readonly data: Uint8Array;
  readonly signature: Uint8Array;
  readonly resolve: (valid: boolean) => void;
}

function loadNodeCrypto(): NodeCrypto | undefined {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  return proc?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined;
}

/** Settled: `.then(flush)` schedules a microtask without the `AsyncResource` `queueMicrotask` makes per call. */
const SETTLED = Promise.resolve();

function createNodeEngine(nodeCrypto: NodeCrypto): SignatureEngine {
  // Two arrays in turn, so that a flush allocates none.
  let queue: Job[] = [];
  let spare: Job[] = [];
  let scheduled = false;
  let running = 0;

  const runSync = (job: Job): void => {
    let valid = false;
    try {
      valid = nodeCrypto.verify(job.hash, job.data, job.key, job.signature);
    } catch {
      valid = false;
    }
    job.resolve(valid);
  };

  const runInPool = (job: Job): void => {
    running += 1;
    try {
      nodeCrypto.verify(job.hash, job.data, job.key, job.signature, (error, valid) => {
        running -= 1;
        job.resolve(error === null && valid);
      });
    } catch {
      running -= 1;
      job.resolve(false);
    }
  };

  const flush = (): void => {
    scheduled = false;
    const batch = queue;
    queue = spare;
    spare = batch;
    if (batch.length === 1 && running === 0) runSync(batch[0] as Job);
    else for (const job of batch) runInPool(job);
    batch.length = 0;
  };

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
      return new Promise<boolean>((resolve) => {
        queue.push({ hash: parameters.hash, key: verifyKey, data, signature, resolve });
        if (!scheduled) {
          scheduled = true;
          void SETTLED.then(flush);
        }
      });
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
