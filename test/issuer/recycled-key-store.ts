/**
 * A {@link KeyStore} whose `generate()` hands out key pairs made once, in turn: for a test that runs
 * the schedule through hundreds of fresh stores, where a fresh 2048-bit key for each would cost a
 * tenth of a second of CPU or more. A store never hands out a pair twice; different stores share
 * the pairs, so give each store its own issuer and each issuer its own verifier.
 */
import type { RsaPublicJwk } from '../../src/index.js';
import { type KeyRecord, type KeyStore, KeyStoreError } from '../../src/issuer/index.js';
import { type CryptoKey, type GeneratedKeyPair, generateRsaKeyPair, signRs256 } from '../../src/issuer/rsa-key.js';

/** `count` key pairs to share among {@link RecycledKeyStore}s (drawn from the run's key pool). */
export function makeKeyPairs(count: number): Promise<readonly GeneratedKeyPair[]> {
  return Promise.all(Array.from({ length: count }, () => generateRsaKeyPair()));
}

export class RecycledKeyStore implements KeyStore {
  readonly #pairs: readonly GeneratedKeyPair[];
  readonly #held = new Map<string, CryptoKey>();
  #handedOut = 0;
  #schedule: readonly KeyRecord[] = [];

  constructor(pairs: readonly GeneratedKeyPair[]) {
    this.#pairs = pairs;
  }

  async generate(): Promise<RsaPublicJwk> {
    const pair = this.#pairs[this.#handedOut];
    if (pair === undefined) throw new Error(`RecycledKeyStore: all ${this.#pairs.length} key pairs are handed out`);
    this.#handedOut += 1;
    this.#held.set(pair.publicJwk.kid, pair.privateKey);
    return pair.publicJwk;
  }

  async sign(kid: string, data: Uint8Array): Promise<Uint8Array> {
    const key = this.#held.get(kid);
    if (key === undefined) throw new KeyStoreError('key_not_found', `The key store holds no key "${kid}".`);
    return signRs256(key, data);
  }

  async loadSchedule(): Promise<readonly KeyRecord[]> {
    return this.#schedule;
  }

  async saveSchedule(records: readonly KeyRecord[]): Promise<void> {
    this.#schedule = [...records];
  }

  async destroy(kid: string): Promise<void> {
    this.#held.delete(kid);
  }
}
