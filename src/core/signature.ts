/**
 * RSA signature verification over the exact received bytes (SPEC §3.5), with each key parsed once.
 *
 * Two engines:
 * - `node`: a prepared `KeyObject`. A verification that is the first of its turn of the event
 *   loop, with none still running elsewhere, runs synchronously and answers at once (the fastest
 *   a single call can be). RS256, RS384 and RS512 open the signature with the raw RSA public
 *   operation (`crypto.publicDecrypt`) and compare it with the expected encoding of the digest
 *   (see `pkcs1-encoding.ts`), which spares `crypto.verify`'s per-call set-up; PS256/384/512 use
 *   `crypto.verify`. The others of a burst, and any while some are running, go elsewhere so that
 *   the other core works too: RS256/384/512 to the engine's own worker thread, which this thread
 *   helps (see `signature-thread.ts`); PS256/384/512, and everything until that thread is online
 *   or if it cannot run, to libuv's thread pool through `crypto.verify`.
 * - `webcrypto`: `crypto.subtle`, for runtimes without `node:crypto` (Workers, Deno, browsers).
 *
 * @module paygate-auth
 */
import type { webcrypto } from 'node:crypto';
import { asciiBytes } from './base64url.js';
import type { RsaAlgorithm } from './jose-header.js';
import type { RsaPublicJwk } from './jwk.js';
import { type Pkcs1Hash, Pkcs1Encoding } from './pkcs1-encoding.js';
import { SignatureThread, type ThreadKey } from './signature-thread.js';

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
  /**
   * `true` when `signature` verifies over `signingInput` (ASCII: the token up to its second dot):
   * at once when it ran synchronously, else a promise.
   */
  verify(alg: RsaAlgorithm, key: PreparedKey, signingInput: string, signature: Uint8Array): boolean | Promise<boolean>;
}

interface AlgorithmParameters {
  readonly hash: Pkcs1Hash;
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

/** What the node engine keeps of a key. */
interface NodeKeyHandle extends ThreadKey {
  readonly keyObject: NodeKeyObject;
  /** The key with no padding: `publicDecrypt` then computes the raw RSA public operation. */
  readonly raw: { readonly key: NodeKeyObject; readonly padding: number };
  /** Bytes of the modulus: every signature must be exactly this long (RFC 8017 §8.2.2). */
  readonly modulusBytes: number;
  /** The EMSA-PKCS1-v1_5 encodings, by hash, built on first use. */
  readonly encodings: Map<Pkcs1Hash, Pkcs1Encoding>;
}

/** The key's EMSA-PKCS1-v1_5 encoding for `hashName`, built on first use. */
function encodingFor(handle: NodeKeyHandle, hashName: Pkcs1Hash): Pkcs1Encoding {
  let encoding = handle.encodings.get(hashName);
  if (encoding === undefined) {
    encoding = new Pkcs1Encoding(hashName, handle.modulusBytes);
    handle.encodings.set(hashName, encoding);
  }
  return encoding;
}

function loadNodeCrypto(): NodeCrypto | undefined {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  return proc?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined;
}

/**
 * The same public key, imported again from its SPKI DER. Node builds a key read from a JWK through
 * OpenSSL's legacy RSA structure, and OpenSSL 3 then looks up the key's algorithm by name for every
 * call that uses it; a key decoded from DER belongs to OpenSSL's provider from the start, which
 * spares each RSA call that look-up (0.26 to 0.29 µs of a 20.7 to 20.8 µs signature check,
 * measured alternately; see `bench/README.md`).
 */
function providerKey(nodeCrypto: NodeCrypto, key: NodeKeyObject): NodeKeyObject {
  return nodeCrypto.createPublicKey({ key: key.export({ type: 'spki', format: 'der' }), format: 'der', type: 'spki' });
}

/** Settled: `.then(fn)` schedules a microtask without the `AsyncResource` `queueMicrotask` makes per call. */
const SETTLED = Promise.resolve();

/** `crypto.hash` (one-shot digests: Node 20.12+, 21.7+), where the runtime has it. */
type OneShotHash = (algorithm: string, data: string, outputEncoding: 'binary') => string;

/** The `node` engine, with what its tests need to pick a path. */
export interface NodeSignatureEngine extends SignatureEngine {
  /** Starts the thread for bursts (if this engine has one); resolves `true` once it is online. */
  startThread(): Promise<boolean>;
}

/** Options of {@link createNodeEngine}. */
export interface NodeEngineOptions {
  /**
   * Whether bursts of RS256/384/512 checks go to a worker thread of the engine's own (with a
   * share run here) rather than to libuv's thread pool; see `signature-thread.ts`.
   * @default true
   */
  readonly thread?: boolean;
}

/**
 * A `node` engine of its own (the verifiers share one, from {@link signatureEngine}).
 * @throws {TypeError} when this runtime lacks `node:crypto`.
 */
export function createNodeEngine(options: NodeEngineOptions = {}): NodeSignatureEngine {
  const nodeCrypto = loadNodeCrypto();
  if (!nodeCrypto) throw new TypeError('crypto: "node" needs node:crypto, which this runtime lacks; use "webcrypto"');
  return nodeEngineOver(nodeCrypto, options.thread ?? true);
}

function nodeEngineOver(nodeCrypto: NodeCrypto, threaded: boolean): NodeSignatureEngine {
  /** Verifications in the thread pool now. */
  let running = 0;
  /** Verifications asked for since the last microtask checkpoint: more than one is a burst. */
  let thisTurn = 0;
  const endTurn = (): void => {
    thisTurn = 0;
  };
  const hash = (nodeCrypto as { hash?: OneShotHash }).hash;
  const noPadding = nodeCrypto.constants.RSA_NO_PADDING;

  /** RSASSA-PKCS1-v1_5 by the raw public operation and a comparison (see `pkcs1-encoding.ts`). */
  const verifyPkcs1 = (handle: NodeKeyHandle, hashName: Pkcs1Hash, signingInput: string, signature: Uint8Array): boolean => {
    if (signature.byteLength !== handle.modulusBytes) return false;
    try {
      // Throws when the signature, as a number, is not below the modulus.
      const opened = nodeCrypto.publicDecrypt(handle.raw, signature);
      // The digest as a binary string: no buffer with memory of its own to free per token.
      return opened.equals(encodingFor(handle, hashName).ofBinary((hash as OneShotHash)(hashName, signingInput, 'binary')));
    } catch {
      return false;
    }
  };
  /** Bursts of RS256/384/512 checks: a worker thread and a share here (see `signature-thread.ts`). */
  const thread = threaded && hash !== undefined ? new SignatureThread<NodeKeyHandle>(verifyPkcs1) : undefined;

  const verifyHere = (parameters: AlgorithmParameters, signingInput: string, handle: NodeKeyHandle, key: VerifyKey, signature: Uint8Array): boolean => {
    try {
      if (!parameters.pss && hash !== undefined) return verifyPkcs1(handle, parameters.hash, signingInput, signature);
      return nodeCrypto.verify(parameters.hash, asciiBytes(signingInput), key, signature);
    } catch {
      return false;
    }
  };

  const verifyInPool = (hashName: string, data: Uint8Array, key: VerifyKey, signature: Uint8Array): Promise<boolean> =>
    new Promise<boolean>((resolve) => {
      running += 1;
      try {
        nodeCrypto.verify(hashName, data, key, signature, (error, valid) => {
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
    startThread: () => thread?.whenReady() ?? Promise.resolve(false),
    async prepare(jwk) {
      const keyObject = providerKey(nodeCrypto, nodeCrypto.createPublicKey({ key: { kty: 'RSA', n: jwk.n, e: jwk.e }, format: 'jwk' }));
      const bits = keyObject.asymmetricKeyDetails?.modulusLength ?? 0;
      const handle: NodeKeyHandle = {
        keyObject,
        raw: { key: keyObject, padding: noPadding },
        modulusBytes: Math.ceil(bits / 8),
        encodings: new Map(),
        encoding: (hashName) => encodingFor(handle, hashName).copy(),
      };
      return { kid: jwk.kid, jwk, handle };
    },
    verify(alg, key, signingInput, signature) {
      const parameters = PARAMETERS[alg];
      const handle = key.handle as NodeKeyHandle;
      const verifyKey: VerifyKey = parameters.pss
        ? { key: handle.keyObject, padding: nodeCrypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: parameters.saltLength }
        : handle.keyObject;
      if (thisTurn++ === 0) void SETTLED.then(endTurn);
      if (thisTurn === 1 && running === 0 && (thread === undefined || thread.pending === 0)) {
        return verifyHere(parameters, signingInput, handle, verifyKey, signature);
      }
      if (!parameters.pss && thread?.ready === true) return thread.verify(handle, parameters.hash, signingInput, signature);
      return verifyInPool(parameters.hash, asciiBytes(signingInput), verifyKey, signature);
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
    async verify(alg, key, signingInput, signature) {
      const byAlgorithm = key.handle as Map<RsaAlgorithm, Promise<webcrypto.CryptoKey>>;
      const parameters = PARAMETERS[alg];
      let cryptoKey = byAlgorithm.get(alg);
      if (cryptoKey === undefined) {
        cryptoKey = importFor(key.jwk, parameters);
        byAlgorithm.set(alg, cryptoKey);
      }
      try {
        const algorithm = parameters.pss ? { name: 'RSA-PSS', saltLength: parameters.saltLength } : { name: 'RSASSA-PKCS1-v1_5' };
        return await subtle.verify(algorithm, await cryptoKey, signature, asciiBytes(signingInput));
      } catch {
        return false;
      }
    },
  };
}

let nodeEngine: NodeSignatureEngine | undefined;
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
    nodeEngine ??= createNodeEngine();
    return nodeEngine;
  }
  const subtle = (globalThis as { crypto?: { subtle?: webcrypto.SubtleCrypto } }).crypto?.subtle;
  if (!subtle) throw new TypeError('crypto: "webcrypto" needs globalThis.crypto.subtle, which this runtime lacks');
  webEngine ??= createWebCryptoEngine(subtle);
  return webEngine;
}
