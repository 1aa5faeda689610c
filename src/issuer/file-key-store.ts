/**
 * Keys in a directory, for Node: one private key file per key (PKCS#8 PEM or a private JWK), mode
 * 0600, and the schedule in `schedule.json`, each written crash-safely. `node:fs` is loaded only when the store is used, so
 * importing `paygate-auth/issuer` stays possible on runtimes without it.
 */
import type { RsaPublicJwk } from '../index.js';
import { describeValue, numberOption, quote, rejectUnknownOptions, optionNames } from '../internal/index.js';
import { hasCode, makeDirectoryDurably, removeFileDurably, writeFileDurably } from './durable-file.js';
import { KeyStoreError } from './errors.js';
import {
  type PrivateKeyFormat,
  checkKeyDirectoryMode,
  checkKeyFormat,
  generateKeyText,
  importPrivateKey,
  readPrivateKeyText,
  writePrivateKeyFile,
} from './key-file.js';
import type { KeyRecord, KeyStore } from './key-store.js';
import { type CryptoKey, checkModulusLength, signRs256 } from './rsa-key.js';

/** The members of {@link FileKeyStoreOptions}: any other is refused, naming the nearest. */
const FILE_KEY_STORE_OPTION_NAMES = optionNames<FileKeyStoreOptions>({
  directory: true,
  format: true,
  modulusLength: true,
  sweepAfter: true,
});

/** Options of {@link FileKeyStore}. */
export interface FileKeyStoreOptions {
  /**
   * The directory (created with mode 0700 if missing). Nothing else should write there: a directory
   * that group or others may write is refused (`insecure_directory`).
   */
  readonly directory: string;
  /**
   * How private keys are written: `pkcs8` (`<kid>.pem`, PKCS#8 PEM) or `jwk` (`<kid>.jwk.json`).
   * Either is read back whatever this says.
   * @default 'pkcs8'
   */
  readonly format?: PrivateKeyFormat | undefined;
  /**
   * Modulus length of generated keys, in bits.
   * @default 2048
   */
  readonly modulusLength?: 2048 | 3072 | 4096 | undefined;
  /**
   * Seconds a key file that no schedule entry names is left alone by the sweep: another instance
   * sharing the directory may have just generated it and be about to save the schedule. `0` when
   * one process owns the directory.
   * @default 60
   */
  readonly sweepAfter?: number | undefined;
}

type Fs = typeof import('node:fs/promises');
type Path = typeof import('node:path');

const SCHEDULE = 'schedule.json';
const KID = /^[A-Za-z0-9_-]{1,128}$/;
const KEY_SUFFIXES = [
  ['.pem', 'pkcs8'],
  ['.jwk.json', 'jwk'],
] as const;
/** A key file, or a temporary file left by a crash: `<kid>.pem`, `<kid>.jwk.json`, `<name>.<uuid>.tmp`. */
const KEY_FILE = /^([A-Za-z0-9_-]{1,128})\.(?:pem|jwk\.json)$/;
const TEMPORARY_FILE = /^([A-Za-z0-9_-]{1,128})\.(?:pem|jwk\.json|json)\.[0-9a-f-]{36}\.tmp$/;

/**
 * What to do about a key file the schedule names that is missing or damaged: a new key in its place
 * would not be the key the schedule publishes.
 */
const LOST_KEY_ADVICE = `restore it from a backup; if it is lost, remove its entry from ${SCHEDULE} (the tokens it signed will be refused)`;

function checkKid(kid: unknown): string {
  if (typeof kid !== 'string' || !KID.test(kid))
    throw new KeyStoreError(
      'key_not_found',
      `${describeValue(kid)} is not a key id this store can hold (1 to 128 letters, digits, "-" and "_").`,
    );
  return kid;
}

function isPublicJwk(value: unknown, kid: string): value is RsaPublicJwk {
  if (typeof value !== 'object' || value === null) return false;
  const jwk = value as Record<string, unknown>;
  return (
    jwk.kty === 'RSA' &&
    typeof jwk.n === 'string' &&
    typeof jwk.e === 'string' &&
    jwk.kid === kid &&
    jwk.alg === 'RS256' &&
    jwk.use === 'sig' &&
    Object.keys(jwk).length === 6
  );
}

/**
 * `invalid_schedule` for `file` (the schedule's path): `problem`, then what to do. The key files
 * beside it are left alone, so a copy from a backup starts the issuer again.
 */
function damagedSchedule(file: string, problem: string, cause?: unknown): KeyStoreError {
  return new KeyStoreError(
    'invalid_schedule',
    `${quote(file)}: ${problem}; restore ${SCHEDULE} from a backup, or correct it (the key files beside it are kept).`,
    cause === undefined ? undefined : { cause },
  );
}

function checkRecord(file: string, value: unknown, index: number): KeyRecord {
  const where = `entry ${index}`;
  if (typeof value !== 'object' || value === null) throw damagedSchedule(file, `${where} is not an object`);
  const record = value as Record<string, unknown>;
  const kid = record.kid;
  if (typeof kid !== 'string' || !KID.test(kid) || !isPublicJwk(record.publicJwk, kid)) {
    throw damagedSchedule(file, `${where} has no valid kid and public JWK`);
  }
  for (const time of ['publishedAt', 'signsFrom', 'retiredAt', 'compromisedAt'] as const) {
    const at = record[time];
    const optional = time === 'retiredAt' || time === 'compromisedAt';
    if ((!optional || at !== undefined) && (typeof at !== 'number' || !Number.isFinite(at))) {
      throw damagedSchedule(file, `${where}.${time} is not a time in milliseconds`);
    }
  }
  const retainFor = record.retainFor;
  if (retainFor !== undefined && (typeof retainFor !== 'number' || !Number.isFinite(retainFor) || retainFor < 0)) {
    throw damagedSchedule(
      file,
      `${where}.retainFor is ${describeValue(retainFor)}; it must be a number of seconds of at least 0, or absent`,
    );
  }
  // Absent in the schedules of versions without standbys: those load as they are.
  if (record.standby !== undefined && record.standby !== true) {
    const found =
      typeof record.standby === 'string'
        ? quote(record.standby)
        : typeof record.standby === 'object'
          ? 'an object'
          : String(record.standby);
    throw damagedSchedule(file, `${where}.standby is ${found}; it must be true (a standby) or absent`);
  }
  const { publishedAt, signsFrom, retiredAt, compromisedAt, standby } = record as unknown as KeyRecord;
  return Object.freeze({
    kid,
    publicJwk: Object.freeze({ ...(record.publicJwk as RsaPublicJwk) }),
    publishedAt,
    signsFrom,
    ...(retiredAt === undefined ? {} : { retiredAt }),
    ...(retainFor === undefined ? {} : { retainFor }),
    ...(standby === undefined ? {} : { standby }),
    ...(compromisedAt === undefined ? {} : { compromisedAt }),
  });
}

/**
 * A {@link KeyStore} in a directory. Private key files are created with mode 0600 and never
 * overwritten; a key file that group or others may read is refused (`insecure_key_file`), and so
 * is a directory they may write (`insecure_directory`). Every write is crash-safe (a temporary
 * file, fsync, rename, fsync of the directory). Keys are imported as non-extractable `CryptoKey`s
 * and kept in memory while the store lives.
 */
export class FileKeyStore implements KeyStore {
  readonly directory: string;
  readonly format: PrivateKeyFormat;
  readonly #modulusLength: number;
  readonly #sweepAfter: number;
  readonly #keys = new Map<string, Promise<CryptoKey>>();
  #modules: Promise<{ fs: Fs; path: Path }> | undefined;
  #checked: Promise<void> | undefined;

  constructor(options: FileKeyStoreOptions) {
    rejectUnknownOptions('FileKeyStore', options, FILE_KEY_STORE_OPTION_NAMES);
    if (typeof options !== 'object' || options === null || typeof options.directory !== 'string' || options.directory === '') {
      throw new TypeError(
        `FileKeyStore: directory must be a non-empty path, got ${describeValue((options as Partial<FileKeyStoreOptions> | null)?.directory)}`,
      );
    }
    this.format = checkKeyFormat('FileKeyStore', options.format);
    this.directory = options.directory;
    this.#modulusLength = checkModulusLength('FileKeyStore: modulusLength', options.modulusLength);
    this.#sweepAfter = numberOption('FileKeyStore', 'sweepAfter', options.sweepAfter, 60, { unit: 'seconds', min: 0, max: 86_400 });
  }

  #node(): Promise<{ fs: Fs; path: Path }> {
    this.#modules ??= Promise.all([import('node:fs/promises'), import('node:path')]).then(([fs, path]) => ({
      fs,
      path,
    }));
    return this.#modules;
  }

  async #file(name: string): Promise<string> {
    const { path } = await this.#node();
    return path.join(this.directory, name);
  }

  /** Creates the directory (0700) if missing and refuses one that group or others may write; once. */
  #directory(): Promise<void> {
    if (this.#checked === undefined) {
      const checked = (async () => {
        await makeDirectoryDurably(this.directory, 0o700);
        await checkKeyDirectoryMode(this.directory);
      })();
      // A refusal is not remembered: after a chmod, the next call checks again.
      checked.catch(() => {
        this.#checked = undefined;
      });
      this.#checked = checked;
    }
    return this.#checked;
  }

  async #keyFiles(): Promise<{ keys: string[]; temporary: string[] }> {
    const { fs } = await this.#node();
    const names = await fs.readdir(this.directory);
    return {
      keys: names.filter((name) => KEY_FILE.test(name)),
      temporary: names.filter((name) => TEMPORARY_FILE.test(name)),
    };
  }

  async generate(): Promise<RsaPublicJwk> {
    await this.#directory();
    // A key file is never the first thing in the directory: a schedule missing later is then a loss,
    // not a fresh start (see loadSchedule). Written only when missing: a copy written and fsynced
    // for nothing would be a full disk's first failure, naming the schedule for a key's write.
    const schedule = await this.#file(SCHEDULE);
    if (!(await this.#exists(schedule))) {
      try {
        await writeFileDurably(schedule, `${JSON.stringify({ keys: [] }, null, 2)}\n`, { mode: 0o644, overwrite: false });
      } catch (error) {
        if (!hasCode(error, 'EEXIST')) throw error;
      }
    }
    const { publicJwk, text } = await generateKeyText(this.format, this.#modulusLength);
    await writePrivateKeyFile(await this.#file(`${publicJwk.kid}${this.format === 'pkcs8' ? '.pem' : '.jwk.json'}`), text);
    return publicJwk;
  }

  async #exists(file: string): Promise<boolean> {
    const { fs } = await this.#node();
    try {
      await fs.lstat(file);
      return true;
    } catch (error) {
      if (hasCode(error, 'ENOENT')) return false;
      throw error;
    }
  }

  async #readKey(kid: string): Promise<CryptoKey> {
    for (const [suffix, format] of KEY_SUFFIXES) {
      const file = await this.#file(`${kid}${suffix}`);
      let text: string;
      try {
        text = await readPrivateKeyText(file);
      } catch (error) {
        if (hasCode(error, 'ENOENT')) continue;
        throw error;
      }
      return importPrivateKey(text, format, file, LOST_KEY_ADVICE);
    }
    throw new KeyStoreError(
      'key_not_found',
      `${quote(this.directory)} holds no key file for ${quote(kid)} (${KEY_SUFFIXES.map(([suffix]) => `${kid}${suffix}`).join(' or ')}): ${LOST_KEY_ADVICE}.`,
    );
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

  /**
   * The schedule as saved; `[]` for a directory holding no key.
   * @throws {KeyStoreError} `schedule_missing` when `schedule.json` is gone but key files remain
   * (restore it, or move the key files away to start over); `invalid_schedule` for a damaged one.
   */
  async loadSchedule(): Promise<readonly KeyRecord[]> {
    const { fs } = await this.#node();
    await this.#directory();
    const file = await this.#file(SCHEDULE);
    let text: string;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (error) {
      if (!hasCode(error, 'ENOENT')) throw error;
      const { keys } = await this.#keyFiles();
      if (keys.length === 0) return [];
      throw new KeyStoreError(
        'schedule_missing',
        `${quote(file)} is missing, but ${quote(this.directory)} holds key files (${keys.sort().join(', ')}): restore ${SCHEDULE} from a backup, or move the key files away to start over.`,
      );
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw damagedSchedule(file, text.trim() === '' ? `it is empty (${text.length} bytes), not JSON` : 'it is not JSON', error);
    }
    const keys = (parsed as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys)) throw damagedSchedule(file, 'it holds no "keys" array');
    return Object.freeze(keys.map((record, index) => checkRecord(file, record, index)));
  }

  async saveSchedule(records: readonly KeyRecord[]): Promise<void> {
    await this.#directory();
    await writeFileDurably(await this.#file(SCHEDULE), `${JSON.stringify({ keys: records }, null, 2)}\n`, {
      mode: 0o644,
      overwrite: true,
    });
  }

  async destroy(kid: string): Promise<void> {
    checkKid(kid);
    this.#keys.delete(kid);
    for (const [suffix] of KEY_SUFFIXES) await removeFileDurably(await this.#file(`${kid}${suffix}`));
  }

  /**
   * `true` when `file` was written after `oldest` (ms since the epoch), or is gone. With
   * `sweepAfter` 0 no age is asked: a file written in the same millisecond as the sweep (its
   * `mtimeMs` carries a fraction `Date.now()` does not) would otherwise escape it.
   */
  async #isYounger(file: string, oldest: number): Promise<boolean> {
    const { fs } = await this.#node();
    try {
      return (await fs.stat(file)).mtimeMs > oldest;
    } catch (error) {
      if (hasCode(error, 'ENOENT')) return true;
      throw error;
    }
  }

  /**
   * Deletes every key file (and temporary file left by a crash) older than `sweepAfter` whose kid
   * `keep` does not name, and resolves those kids.
   */
  async sweep(keep: readonly string[]): Promise<readonly string[]> {
    await this.#directory();
    const named = new Set(keep);
    const { keys, temporary } = await this.#keyFiles();
    const removed = new Set<string>();
    const oldest = Date.now() - this.#sweepAfter * 1000;
    for (const name of [...keys, ...temporary]) {
      const keyFile = KEY_FILE.exec(name);
      const kid = (keyFile ?? TEMPORARY_FILE.exec(name))?.[1] as string;
      if (keyFile !== null && named.has(kid)) continue; // a temporary file is never needed
      // The schedule's own temporary files carry the name "schedule", never a kid.
      const isKey = !name.startsWith(`${SCHEDULE}.`) && !named.has(kid);
      const file = await this.#file(name);
      if (this.#sweepAfter > 0 && (await this.#isYounger(file, oldest))) continue;
      if ((await removeFileDurably(file)) && isKey) {
        removed.add(kid);
        this.#keys.delete(kid);
      }
    }
    return [...removed];
  }
}
