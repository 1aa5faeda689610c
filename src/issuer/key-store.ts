/**
 * Where an issuer's keys live. The issuer never holds a private key itself: it asks its store to
 * generate a key pair, to sign, and to destroy a key, and keeps its rotation schedule in the store
 * too. {@link InMemoryKeyStore} is for tests; `FileKeyStore` writes files; a KMS-backed store
 * implements the same five methods (and, optionally, `sweep`) (see `docs/issuer.md`).
 */
import { describeValue, quote, rejectUnknownOptions, optionNames } from '../internal/index.js';
import { KeyStoreError } from './errors.js';
import type { RsaPublicJwk } from '../index.js';
import { type CryptoKey, generateRsaKeyPair, signRs256 } from './rsa-key.js';

/** The members of {@link InMemoryKeyStoreOptions}: any other is refused, naming the nearest. */
const IN_MEMORY_KEY_STORE_OPTION_NAMES = optionNames<InMemoryKeyStoreOptions>({ modulusLength: true });

/** One key in the rotation schedule. Times are milliseconds since the epoch. */
export interface KeyRecord {
  readonly kid: string;
  /** The public key as published. */
  readonly publicJwk: RsaPublicJwk;
  /** When it was first published in the JWKS, in milliseconds since the epoch (as every time of a record). */
  readonly publishedAt: number;
  /**
   * When it starts signing: at least the publication lead after `publishedAt`. For a standby, when
   * it may first sign.
   */
  readonly signsFrom: number;
  /** When its successor started signing: set once that has happened. */
  readonly retiredAt?: number;
  /**
   * Seconds it stays published once retired: the longest token lifetime plus the retention margin
   * of every issuer that held it while it could sign (the longest recorded wins). Lowering
   * `maxLifetime` or `rotation.retentionMargin` and restarting then never drops a key whose tokens
   * may still be valid. Absent from the records of earlier versions: the issuer's own settings apply.
   */
  readonly retainFor?: number;
  /**
   * Set on a standby: a key that signs only when it takes the turn of a compromised key (it then
   * loses the mark, and `signsFrom` becomes that moment). Absent from the records of versions
   * without standbys, which load as they are.
   */
  readonly standby?: true;
  /**
   * Set by `compromised(kid)` just before the private half is destroyed: the key is neither
   * published nor used, and the next start-up or `tick()` destroys it if a crash came between.
   */
  readonly compromisedAt?: number;
}

/**
 * What an issuer needs of its key storage. Every method may be called concurrently with `sign`;
 * the issuer serialises the others.
 */
export interface KeyStore {
  /**
   * Makes a new RS256 key pair (modulus of at least 2048 bits), keeps its private half, and
   * resolves its public JWK, whose `kid` names the key from then on.
   */
  generate(): Promise<RsaPublicJwk>;
  /**
   * Signs `data` with key `kid`: RSASSA-PKCS1-v1_5 with SHA-256, the raw signature bytes.
   * @throws {KeyStoreError} `key_not_found` when the store does not hold `kid`.
   */
  sign(kid: string, data: Uint8Array): Promise<Uint8Array>;
  /** The schedule as last saved; `[]` before the first save. */
  loadSchedule(): Promise<readonly KeyRecord[]>;
  /** Replaces the saved schedule in one step (all or nothing). */
  saveSchedule(records: readonly KeyRecord[]): Promise<void>;
  /** Deletes key `kid`'s private half for good; a `kid` it does not hold is no error. */
  destroy(kid: string): Promise<void>;
  /**
   * Optional: deletes every private key it holds that `keep` does not name (left by a crash between
   * `generate()` and `saveSchedule()`, or between `saveSchedule()` and `destroy()`), and resolves
   * their kids. The issuer calls it at start-up and at every `tick()`, with the schedule's kids.
   */
  sweep?(keep: readonly string[]): Promise<readonly string[]>;
}

const STORE_METHODS = ['generate', 'sign', 'loadSchedule', 'saveSchedule', 'destroy'] as const;

/** Checks that `value` implements {@link KeyStore}. @throws {TypeError} naming `name` and the member. */
export function checkKeyStore(name: string, value: unknown): KeyStore {
  if (typeof value !== 'object' || value === null)
    throw new TypeError(`${name} must be a KeyStore object (such as a FileKeyStore), got ${describeValue(value)}`);
  for (const method of STORE_METHODS) {
    if (typeof (value as Record<string, unknown>)[method] !== 'function') {
      throw new TypeError(
        `${name}.${method} must be a function (see the KeyStore interface), got ${describeValue((value as Record<string, unknown>)[method])}`,
      );
    }
  }
  const sweep = (value as Record<string, unknown>).sweep;
  if (sweep !== undefined && typeof sweep !== 'function')
    throw new TypeError(`${name}.sweep must be a function when given, got ${describeValue(sweep)}`);
  return value as KeyStore;
}

/** Options of {@link InMemoryKeyStore}. */
export interface InMemoryKeyStoreOptions {
  /**
   * Modulus length of the keys it generates, in bits.
   * @default 2048
   */
  readonly modulusLength?: 2048 | 3072 | 4096 | undefined;
}

/**
 * Keys held in memory only, as non-extractable `CryptoKey`s: for tests, and for a process whose
 * keys may vanish with it. Works on every WebCrypto runtime.
 */
export class InMemoryKeyStore implements KeyStore {
  readonly #keys = new Map<string, CryptoKey>();
  readonly #modulusLength: number | undefined;
  #schedule: readonly KeyRecord[] = [];

  constructor(options: InMemoryKeyStoreOptions = {}) {
    rejectUnknownOptions('InMemoryKeyStore', options, IN_MEMORY_KEY_STORE_OPTION_NAMES);
    this.#modulusLength = options.modulusLength;
  }

  async generate(): Promise<RsaPublicJwk> {
    const pair = await generateRsaKeyPair({ modulusLength: this.#modulusLength, extractable: false });
    this.#keys.set(pair.publicJwk.kid, pair.privateKey);
    return pair.publicJwk;
  }

  async sign(kid: string, data: Uint8Array): Promise<Uint8Array> {
    const key = this.#keys.get(kid);
    if (key === undefined) throw new KeyStoreError('key_not_found', `The key store holds no key ${quote(kid)}.`);
    return signRs256(key, data);
  }

  async loadSchedule(): Promise<readonly KeyRecord[]> {
    return this.#schedule;
  }

  async saveSchedule(records: readonly KeyRecord[]): Promise<void> {
    this.#schedule = Object.freeze(records.map((record) => Object.freeze({ ...record })));
  }

  async destroy(kid: string): Promise<void> {
    this.#keys.delete(kid);
  }

  async sweep(keep: readonly string[]): Promise<readonly string[]> {
    const named = new Set(keep);
    const removed = this.kids.filter((kid) => !named.has(kid));
    for (const kid of removed) this.#keys.delete(kid);
    return removed;
  }

  /** The kids whose private halves it holds. */
  get kids(): readonly string[] {
    return [...this.#keys.keys()];
  }
}
