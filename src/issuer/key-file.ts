/**
 * One private key in one file, for Node: generated and written with mode 0600 crash-safely, or
 * read back (PKCS#8 PEM or a private JWK) with the checks `FileKeyStore` applies to its own.
 * `node:fs` is loaded only when a function here is called.
 */
import { describeValue, optionNames, quote, rejectUnknownOptions } from '../internal/index.js';
import { calculateJwkThumbprint, exportJWK, exportPKCS8, importJWK, importPKCS8 } from 'jose';
import { MIN_MODULUS_BITS, type RsaPublicJwk } from '../index.js';
import { hasCode, makeDirectoryDurably, sweepTemporaries, writeFileDurably } from './durable-file.js';
import { KeyStoreError } from './errors.js';
import { type CryptoKey, checkModulusLength, generateRsaKeyPair } from './rsa-key.js';

/** The members of {@link ReadPrivateKeyFileOptions}: any other is refused, naming the nearest. */
const READ_PRIVATE_KEY_FILE_OPTION_NAMES = optionNames<ReadPrivateKeyFileOptions>({ kid: true });

/** The members of {@link GenerateKeyFileOptions}: any other is refused, naming the nearest. */
const GENERATE_KEY_FILE_OPTION_NAMES = optionNames<GenerateKeyFileOptions>({ format: true, modulusLength: true });

/** How a private key file is written. */
export type PrivateKeyFormat = 'pkcs8' | 'jwk';

/** Options of {@link generateKeyFile}. */
export interface GenerateKeyFileOptions {
  /**
   * How the private key is written: `pkcs8` (PKCS#8 PEM) or `jwk` (a private JWK carrying `kid`,
   * `alg` and `use`).
   * @default 'pkcs8'
   */
  readonly format?: PrivateKeyFormat | undefined;
  /**
   * Modulus length of the key, in bits.
   * @default 2048
   */
  readonly modulusLength?: 2048 | 3072 | 4096 | undefined;
}

/** A private key read from a file, ready to sign, with the `kid` its tokens carry. */
export interface SigningKey {
  /** The private key, imported as a non-extractable RS256 `CryptoKey`. */
  readonly privateKey: CryptoKey;
  /** The key's `kid`. */
  readonly kid: string;
}

/** Options of {@link readPrivateKeyFile}. */
export interface ReadPrivateKeyFileOptions {
  /**
   * The key's `kid`.
   * @default the JWK's `kid` when the file is a JWK that has one, else the key's RFC 7638
   * SHA-256 thumbprint (the `kid` {@link generateKeyFile} and the key stores give it)
   */
  readonly kid?: string | undefined;
}

const PRIVATE_FILE_MODE = 0o600;

/**
 * Generates an RS256 key pair and writes the private key to `file` with mode 0600, crash-safely
 * (a temporary file, fsync, rename, fsync of the directory), creating the directory (0700) if
 * needed. Resolves the public JWK to publish; its `kid` is the key's RFC 7638 thumbprint.
 * @throws {TypeError} for a bad option, naming it.
 * @throws {KeyStoreError} `key_exists` when `file` exists: a key file is never overwritten.
 */
export async function generateKeyFile(file: string, options: GenerateKeyFileOptions = {}): Promise<RsaPublicJwk> {
  rejectUnknownOptions('generateKeyFile', options, GENERATE_KEY_FILE_OPTION_NAMES);
  if (typeof file !== 'string' || file === '')
    throw new TypeError(`generateKeyFile: file must be a non-empty path, got ${describeValue(file)}`);
  const format = checkKeyFormat('generateKeyFile', options.format);
  const modulusLength = checkModulusLength('generateKeyFile: modulusLength', options.modulusLength);
  const { publicJwk, text } = await generateKeyText(format, modulusLength);
  await writePrivateKeyFile(file, text);
  return publicJwk;
}

/**
 * `value`, a key file format, or `'pkcs8'` when it is `undefined`.
 * @throws {TypeError} naming `owner` and the value found otherwise.
 */
export function checkKeyFormat(owner: string, value: unknown): PrivateKeyFormat {
  if (value === undefined) return 'pkcs8';
  if (value === 'pkcs8' || value === 'jwk') return value;
  throw new TypeError(`${owner}: format must be "pkcs8" or "jwk" (a PKCS#8 PEM file or a JWK file), got ${describeValue(value)}`);
}

/** A new RS256 key pair: the private key as the text of a key file in `format`, and the public JWK. */
export async function generateKeyText(
  format: PrivateKeyFormat,
  modulusLength: number,
): Promise<{ readonly publicJwk: RsaPublicJwk; readonly text: string }> {
  const pair = await generateRsaKeyPair({ modulusLength, extractable: true });
  const { kid } = pair.publicJwk;
  const text =
    format === 'pkcs8'
      ? await exportPKCS8(pair.privateKey)
      : `${JSON.stringify({ ...(await exportJWK(pair.privateKey)), kid, alg: 'RS256', use: 'sig' })}\n`;
  return { publicJwk: pair.publicJwk, text };
}

/**
 * Reads a private key file (PKCS#8 PEM, or a private JWK when the text starts with `{`) to sign
 * with, for {@link signToken}.
 * @throws {KeyStoreError} `insecure_key_file` when group or others may read or write it (not
 * checked on Windows); `invalid_key_file`, naming the file and never its content; `weak_key` for
 * an RSA modulus under 2048 bits, naming its size.
 */
export async function readPrivateKeyFile(file: string, options: ReadPrivateKeyFileOptions = {}): Promise<SigningKey> {
  rejectUnknownOptions('readPrivateKeyFile', options, READ_PRIVATE_KEY_FILE_OPTION_NAMES);
  if (options.kid !== undefined && (typeof options.kid !== 'string' || options.kid === ''))
    throw new TypeError(`readPrivateKeyFile: kid must be a non-empty string (or left out), got ${describeValue(options.kid)}`);
  const text = await readPrivateKeyText(file);
  const isJwk = text.trimStart().startsWith('{');
  const privateKey = await importPrivateKey(text, isJwk ? 'jwk' : 'pkcs8', file);
  if (options.kid !== undefined) return { privateKey, kid: options.kid };
  let n: unknown;
  let e: unknown;
  if (isJwk) {
    const jwk = JSON.parse(text) as Record<string, unknown>;
    if (typeof jwk.kid === 'string' && jwk.kid !== '') return { privateKey, kid: jwk.kid };
    ({ n, e } = jwk);
  } else {
    ({ n, e } = await exportJWK(await importPKCS8(pkcs8Block(text), 'RS256', { extractable: true })));
  }
  return { privateKey, kid: await calculateJwkThumbprint({ kty: 'RSA', n: n as string, e: e as string }, 'sha256') };
}

/**
 * Writes a private key file with mode 0600 crash-safely, creating its directory (0700) if needed;
 * never overwrites a file (`key_exists`).
 */
export async function writePrivateKeyFile(file: string, text: string): Promise<void> {
  const path = await import('node:path');
  await makeDirectoryDurably(path.dirname(file), 0o700);
  // A private key a write killed halfway left beside the file (`<file>.<uuid>.tmp`): removed.
  await sweepTemporaries(file);
  try {
    await writeFileDurably(file, text, { mode: PRIVATE_FILE_MODE, overwrite: false });
  } catch (error) {
    if (hasCode(error, 'EEXIST')) throw new KeyStoreError('key_exists', `${quote(file)} exists already; a key file is never overwritten.`);
    throw error;
  }
}

/** The most bytes a private key file may hold: a 4096-bit key takes about 3.3 KB, in PEM or JWK. */
export const MAX_KEY_FILE_BYTES = 65_536;

/**
 * The text of a private key file, once its mode passed {@link checkPrivateKeyFileMode}: at most
 * {@link MAX_KEY_FILE_BYTES} are read, so a wrong file (a log, a disk image) is refused without
 * being read into memory whole.
 * @throws {KeyStoreError} `insecure_key_file`; `invalid_key_file` for a file over the limit.
 */
export async function readPrivateKeyText(file: string): Promise<string> {
  const fs = await import('node:fs/promises');
  await checkPrivateKeyFileMode(file);
  const handle = await fs.open(file, 'r');
  try {
    const buffer = new Uint8Array(MAX_KEY_FILE_BYTES + 1);
    let length = 0;
    for (let read = -1; read !== 0 && length < buffer.length; length += read) {
      ({ bytesRead: read } = await handle.read(buffer, length, buffer.length - length, null));
    }
    if (length > MAX_KEY_FILE_BYTES) {
      throw new KeyStoreError(
        'invalid_key_file',
        `${quote(file)} holds more than ${MAX_KEY_FILE_BYTES} bytes; a private RSA key file holds a few thousand: give the file keys generate wrote with --out.`,
      );
    }
    return new TextDecoder().decode(buffer.subarray(0, length));
  } finally {
    await handle.close();
  }
}

/** Refuses a key file that group or others may read or write (not checked on Windows). */
export function checkPrivateKeyFileMode(file: string): Promise<void> {
  return refuseLooseMode(file, 0o077, 'insecure_key_file', 'may be read by others', 600);
}

/**
 * Refuses a key directory that group or others may write (they could plant or swap a key file);
 * not checked on Windows.
 */
export function checkKeyDirectoryMode(directory: string): Promise<void> {
  return refuseLooseMode(directory, 0o022, 'insecure_directory', 'may be written by others', 700);
}

/** Throws `code` when `path`'s mode has any bit of `mask`, advising `chmod <advice>`. */
async function refuseLooseMode(
  path: string,
  mask: number,
  code: 'insecure_key_file' | 'insecure_directory',
  problem: string,
  advice: number,
): Promise<void> {
  const fs = await import('node:fs/promises');
  const stats = await fs.stat(path);
  // A directory named as a key file is no key file: reading it says so (EISDIR), where "chmod 600" would be wrong advice.
  if (code === 'insecure_key_file' && stats.isDirectory()) return;
  if (process.platform !== 'win32' && (stats.mode & mask) !== 0) {
    throw new KeyStoreError(code, `${quote(path)} ${problem} (mode ${(stats.mode & 0o777).toString(8)}); run chmod ${advice} on it.`);
  }
}

/** A private JWK's `alg` other than RS256 or `use` other than sig, as `alg "RS384", not "RS256"`; else `null`. */
function mislabel(alg: unknown, use: unknown): string | null {
  if (alg !== undefined && alg !== 'RS256') return `alg ${describeValue(alg)}, not "RS256"`;
  if (use !== undefined && use !== 'sig') return `use ${describeValue(use)}, not "sig"`;
  return null;
}

/**
 * What a key file's text that could not be imported holds, and what to do: read from its PEM label
 * or its JWK's `kty` and `d`, which hold no secret; never a quote of the content.
 */
function whatKeyTextHolds(text: string, format: PrivateKeyFormat, damaged: string): string {
  if (format === 'jwk') {
    let jwk: unknown;
    try {
      jwk = JSON.parse(text);
    } catch {
      return `it is not JSON: ${damaged}`;
    }
    const { kty, d, keys, alg, use } = (typeof jwk === 'object' && jwk !== null ? jwk : {}) as Record<string, unknown>;
    if (kty === undefined && Array.isArray(keys)) {
      return 'it is a JWKS ("keys"), the public keys to publish, not the private key: give the file keys generate wrote with --out';
    }
    if (kty !== 'RSA')
      return `its kty is ${typeof kty === 'string' && /^[\w-]{1,16}$/.test(kty) ? `"${kty}"` : 'missing or odd'}, not "RSA"`;
    if (d === undefined) return 'it is a public JWK (no "d"), not the private key: give the file keys generate wrote with --out';
    const label = mislabel(alg, use);
    if (label !== null) {
      return `it is labelled ${label}: a key made for another use is not relabelled, and a verifier refuses RS256 tokens of a key published so; give a key made for RS256 signing (keys generate --format jwk)`;
    }
    return `its members do not make an RSA private key: ${damaged}`;
  }
  const label = /-----BEGIN ([A-Z0-9 ]{1,40})-----/.exec(text)?.[1];
  switch (label) {
    case undefined:
      return `it holds no PEM block ("-----BEGIN PRIVATE KEY-----"): ${damaged}`;
    case 'RSA PRIVATE KEY':
      return `it holds a PKCS#1 key ("RSA PRIVATE KEY"): convert it with openssl pkcs8 -topk8 -nocrypt -in <file> -out <new file>`;
    case 'ENCRYPTED PRIVATE KEY':
      return 'it is encrypted ("ENCRYPTED PRIVATE KEY"): decrypt it with openssl pkcs8 -in <file> -out <new file>';
    case 'PRIVATE KEY':
      if (text.indexOf(PKCS8_BEGIN) !== text.lastIndexOf(PKCS8_BEGIN)) {
        return 'it holds several "PRIVATE KEY" blocks, and which one is meant is not guessed: keep one key per file';
      }
      return `it holds a "PRIVATE KEY" that is not an RSA key, or is damaged: ${damaged}`;
    default:
      return label.includes('PUBLIC KEY') || label === 'CERTIFICATE'
        ? `it holds a "${label}", not the private key: give the file keys generate wrote with --out`
        : `it holds a PEM "${label}" block, not "PRIVATE KEY"`;
  }
}

const PKCS8_BEGIN = '-----BEGIN PRIVATE KEY-----';
const PKCS8_END = '-----END PRIVATE KEY-----';

/**
 * The `PRIVATE KEY` block of a PEM text, without what surrounds it: white space, or the text
 * before and after the block that a PEM file may hold (`openssl pkcs12` writes "Bag Attributes"
 * first), which jose refuses. The text as it is when it holds no such block.
 * @throws {TypeError} when it holds several: which key is meant is not guessed.
 */
function pkcs8Block(text: string): string {
  const begin = text.indexOf(PKCS8_BEGIN);
  // Two keys read as one could still import (the first, with the second's bytes after it).
  if (begin !== -1 && text.indexOf(PKCS8_BEGIN, begin + 1) !== -1) throw new TypeError('several PRIVATE KEY blocks');
  if (begin === -1) return text;
  const end = text.indexOf(PKCS8_END, begin);
  return end === -1 ? text.slice(begin) : text.slice(begin, end + PKCS8_END.length);
}

/** What to do with a key file that holds no key, or a damaged one, when nothing else depends on it. */
const GENERATE_ANOTHER = 'generate one with paygate-auth keys generate';

/**
 * Imports a private key file's text (PKCS#8 PEM or a private JWK) as a non-extractable RS256 key.
 * `damaged` is what to do when the file holds no key or a damaged one: by default, generate one; a
 * key store whose schedule names the key says to restore it instead.
 * @throws {KeyStoreError} `invalid_key_file`, naming the file and never its content; `weak_key`
 * for an RSA modulus under 2048 bits, naming its size.
 */
export async function importPrivateKey(
  text: string,
  format: PrivateKeyFormat,
  file: string,
  damaged: string = GENERATE_ANOTHER,
): Promise<CryptoKey> {
  let key: CryptoKey;
  try {
    if (format === 'pkcs8') key = await importPKCS8(pkcs8Block(text), 'RS256', { extractable: false });
    else {
      const jwk = JSON.parse(text) as Record<string, unknown>;
      if (jwk.kty !== 'RSA' || typeof jwk.d !== 'string') throw new TypeError('not a private RSA JWK');
      // Labelled for another algorithm or use: refused, never relabelled RS256 (see whatKeyTextHolds).
      if (mislabel(jwk.alg, jwk.use) !== null) throw new TypeError('not an RS256 signing key');
      const imported = await importJWK({ ...jwk, alg: 'RS256', ext: false }, 'RS256', { extractable: false });
      if (imported instanceof Uint8Array) throw new TypeError('not an asymmetric key');
      key = imported;
    }
  } catch {
    throw new KeyStoreError(
      'invalid_key_file',
      `${quote(file)} is not a private RSA key in ${format === 'pkcs8' ? 'PKCS#8 PEM' : 'JWK'} form: ${whatKeyTextHolds(text, format, damaged)}.`,
    );
  }
  const bits = (key.algorithm as { modulusLength?: number }).modulusLength ?? 0;
  if (bits < MIN_MODULUS_BITS) {
    throw new KeyStoreError('weak_key', `${quote(file)} holds a ${bits}-bit RSA key; the gateway needs at least ${MIN_MODULUS_BITS} bits.`);
  }
  return key;
}
