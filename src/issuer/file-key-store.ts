/**
 * Keys in a directory, for Node: one private key file per key (PKCS#8 PEM or a private JWK), mode
 * 0600, and the schedule in `schedule.json`. `node:fs` is loaded only when the store is used, so
 * importing `paygate-auth/issuer` stays possible on runtimes without it.
 *
 * @module paygate-auth/issuer
 */
import { exportJWK, exportPKCS8, importJWK, importPKCS8 } from 'jose';
import { KeyStoreError } from './errors.js';
import type { KeyRecord, KeyStore } from './key-store.js';
import { type CryptoKey, type PublicRsaJwk, checkModulusLength, generateRsaKeyPair, signRs256 } from './rsa-key.js';

/** How private keys are written. */
export type PrivateKeyFormat = 'pkcs8' | 'jwk';

/** Options of {@link FileKeyStore}. */
export interface FileKeyStoreOptions {
  /** The directory (created with mode 0700 if missing). Nothing else should write there. */
  readonly directory: string;
  /**
   * How private keys are written: `pkcs8` (`<kid>.pem`, PKCS#8 PEM) or `jwk` (`<kid>.jwk.json`).
   * Either is read back whatever this says.
   * @default 'pkcs8'
   */
  readonly format?: PrivateKeyFormat;
  /**
   * Modulus length of generated keys, in bits.
   * @default 2048
   */
  readonly modulusLength?: 2048 | 3072 | 4096;
}

type Fs = typeof import('node:fs/promises');
type Path = typeof import('node:path');

const SCHEDULE = 'schedule.json';
const KID = /^[A-Za-z0-9_-]{1,128}$/;
const PRIVATE_FILE_MODE = 0o600;

function isMissing(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'ENOENT';
}

function checkKid(kid: unknown): string {
  if (typeof kid !== 'string' || !KID.test(kid)) throw new KeyStoreError('key_not_found', `${JSON.stringify(kid)} is not a key id this store can hold.`);
  return kid;
}

function isPublicJwk(value: unknown, kid: string): value is PublicRsaJwk {
  if (typeof value !== 'object' || value === null) return false;
  const jwk = value as Record<string, unknown>;
  return jwk.kty === 'RSA' && typeof jwk.n === 'string' && typeof jwk.e === 'string' && jwk.kid === kid && jwk.alg === 'RS256' && jwk.use === 'sig' && Object.keys(jwk).length === 6;
}

function checkRecord(value: unknown, index: number): KeyRecord {
  const where = `${SCHEDULE}: entry ${index}`;
  if (typeof value !== 'object' || value === null) throw new KeyStoreError('invalid_schedule', `${where} is not an object.`);
  const record = value as Record<string, unknown>;
  const kid = record.kid;
  if (typeof kid !== 'string' || !KID.test(kid) || !isPublicJwk(record.publicJwk, kid)) {
    throw new KeyStoreError('invalid_schedule', `${where} has no valid kid and public JWK.`);
  }
  for (const time of ['publishedAt', 'signsFrom', 'retiredAt'] as const) {
    const at = record[time];
    if ((time !== 'retiredAt' || at !== undefined) && (typeof at !== 'number' || !Number.isFinite(at))) {
      throw new KeyStoreError('invalid_schedule', `${where}.${time} is not a time in milliseconds.`);
    }
  }
  const { publishedAt, signsFrom, retiredAt } = record as unknown as KeyRecord;
  return Object.freeze({ kid, publicJwk: Object.freeze({ ...(record.publicJwk as PublicRsaJwk) }), publishedAt, signsFrom, ...(retiredAt === undefined ? {} : { retiredAt }) });
}

/**
 * A {@link KeyStore} in a directory. Private key files are created with mode 0600 and never
 * overwritten; a key file that group or others may read is refused (`insecure_key_file`). Keys
 * are imported as non-extractable `CryptoKey`s and kept in memory while the store lives.
 */
export class FileKeyStore implements KeyStore {
  readonly directory: string;
  readonly format: PrivateKeyFormat;
  readonly #modulusLength: number;
  readonly #keys = new Map<string, Promise<CryptoKey>>();
  #modules: Promise<{ fs: Fs; path: Path }> | undefined;

  constructor(options: FileKeyStoreOptions) {
    if (typeof options !== 'object' || options === null || typeof options.directory !== 'string' || options.directory === '') {
      throw new TypeError('FileKeyStore: directory must be a non-empty path');
    }
    if (options.format !== undefined && options.format !== 'pkcs8' && options.format !== 'jwk') {
      throw new TypeError('FileKeyStore: format must be "pkcs8" or "jwk"');
    }
    this.directory = options.directory;
    this.format = options.format ?? 'pkcs8';
    this.#modulusLength = checkModulusLength('FileKeyStore: modulusLength', options.modulusLength);
  }

  #node(): Promise<{ fs: Fs; path: Path }> {
    this.#modules ??= Promise.all([import('node:fs/promises'), import('node:path')]).then(([fs, path]) => ({ fs, path }));
    return this.#modules;
  }

  async #file(name: string): Promise<string> {
    const { path } = await this.#node();
    return path.join(this.directory, name);
  }

  async #ensureDirectory(): Promise<void> {
    const { fs } = await this.#node();
    await fs.mkdir(this.directory, { recursive: true, mode: 0o700 });
  }

  async generate(): Promise<PublicRsaJwk> {
    const pair = await generateRsaKeyPair({ modulusLength: this.#modulusLength, extractable: true });
    const { kid } = pair.publicJwk;
    const text =
      this.format === 'pkcs8'
        ? await exportPKCS8(pair.privateKey)
        : `${JSON.stringify({ ...(await exportJWK(pair.privateKey)), kid, alg: 'RS256', use: 'sig' })}\n`;
    await writePrivateKeyFile(await this.#file(`${kid}${this.format === 'pkcs8' ? '.pem' : '.jwk.json'}`), text);
    return pair.publicJwk;
  }

  async #readKey(kid: string): Promise<CryptoKey> {
    const { fs } = await this.#node();
    for (const [suffix, format] of [['.pem', 'pkcs8'], ['.jwk.json', 'jwk']] as const) {
      const file = await this.#file(`${kid}${suffix}`);
      let text: string;
      try {
        await checkPrivateKeyFileMode(file);
        text = await fs.readFile(file, 'utf8');
      } catch (error) {
        if (isMissing(error)) continue;
        throw error;
      }
      return importPrivateKey(text, format, file);
    }
    throw new KeyStoreError('key_not_found', `The key store holds no key "${kid}".`);
  }

  async sign(kid: string, data: Uint8Array): Promise<Uint8Array> {
    checkKid(kid);
    let key = this.#keys.get(kid);
    if (key === undefined) {
      key = this.#readKey(kid);
      this.#keys.set(kid, key);
      key.catch(() => this.#keys.delete(kid));
    }
    return signRs256(await key, data);
  }

  async loadSchedule(): Promise<readonly KeyRecord[]> {
    const { fs } = await this.#node();
    let text: string;
    try {
      text = await fs.readFile(await this.#file(SCHEDULE), 'utf8');
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new KeyStoreError('invalid_schedule', `${SCHEDULE} is not JSON.`, { cause: error });
    }
    const keys = (parsed as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys)) throw new KeyStoreError('invalid_schedule', `${SCHEDULE} holds no "keys" array.`);
    return Object.freeze(keys.map(checkRecord));
  }

  async saveSchedule(records: readonly KeyRecord[]): Promise<void> {
    const { fs } = await this.#node();
    await this.#ensureDirectory();
    const target = await this.#file(SCHEDULE);
    const temporary = `${target}.${crypto.randomUUID()}.tmp`;
    await fs.writeFile(temporary, `${JSON.stringify({ keys: records }, null, 2)}\n`, { mode: 0o644, flag: 'wx' });
    await fs.rename(temporary, target);
  }

  async destroy(kid: string): Promise<void> {
    checkKid(kid);
    const { fs } = await this.#node();
    this.#keys.delete(kid);
    for (const suffix of ['.pem', '.jwk.json']) {
      try {
        await fs.unlink(await this.#file(`${kid}${suffix}`));
      } catch (error) {
        if (!isMissing(error)) throw error;
      }
    }
  }
}

/**
 * Writes a private key file with mode 0600, creating its directory (0700) if needed; never
 * overwrites a file (`key_exists`).
 */
export async function writePrivateKeyFile(file: string, text: string): Promise<void> {
  const [fs, path] = await Promise.all([import('node:fs/promises'), import('node:path')]);
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  try {
    await fs.writeFile(file, text, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'EEXIST') throw new KeyStoreError('key_exists', `${file} exists already; a key file is never overwritten.`);
    throw error;
  }
}

/** Refuses a key file that group or others may read or write (not checked on Windows). */
export async function checkPrivateKeyFileMode(file: string): Promise<void> {
  const fs = await import('node:fs/promises');
  const stats = await fs.stat(file);
  if (process.platform !== 'win32' && (stats.mode & 0o077) !== 0) {
    throw new KeyStoreError('insecure_key_file', `${file} may be read by others (mode ${(stats.mode & 0o777).toString(8)}); run chmod 600 on it.`);
  }
}

/**
 * Imports a private key file's text (PKCS#8 PEM or a private JWK) as a non-extractable RS256 key.
 * @throws {KeyStoreError} `invalid_key_file`, naming the file and never its content.
 */
export async function importPrivateKey(text: string, format: PrivateKeyFormat, file: string): Promise<CryptoKey> {
  try {
    if (format === 'pkcs8') return await importPKCS8(text, 'RS256', { extractable: false });
    const jwk = JSON.parse(text) as Record<string, unknown>;
    if (jwk.kty !== 'RSA' || typeof jwk.d !== 'string') throw new TypeError('not a private RSA JWK');
    const key = await importJWK({ ...jwk, alg: 'RS256', ext: false }, 'RS256', { extractable: false });
    if (key instanceof Uint8Array) throw new TypeError('not an asymmetric key');
    return key;
  } catch {
    throw new KeyStoreError('invalid_key_file', `${file} is not a private RSA key in ${format === 'pkcs8' ? 'PKCS#8 PEM' : 'JWK'} form.`);
  }
}
