/**
 * RSA key pairs for the tests (vitest `globalSetup`), made once and shared: a fresh 2048-bit key
 * takes the platform a tenth of a second or more of CPU, and the tests ask for some 250.
 * WebCrypto's `generateKey` hands them out in every test file (key-pool.ts, vitest `setupFiles`).
 *
 * Kept between runs in `.tmp/test-rsa-keys.json` (mode 0600; `.tmp/` is ignored by git), so that
 * a run, or a single file run with `npx vitest run`, does not pay for them again; made afresh, in
 * parallel on Node's thread pool, when that file is missing or is not what this module writes.
 * They are throw-away keys that sign only test tokens.
 */
import { type JsonWebKey, createPrivateKey, generateKeyPair } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import type { PooledRsaKey } from './key-pool.js';

const generate = promisify(generateKeyPair);
const CACHE = join(resolve(dirname(fileURLToPath(import.meta.url)), '../..'), '.tmp', 'test-rsa-keys.json');

/** How many distinct keys a test file may draw: more than any file asks for (44). */
const KEY_POOL_SIZE = 48;

/** The kept keys, if the file holds KEY_POOL_SIZE private 2048-bit RSA keys with the exponent 65537. */
async function keptKeys(): Promise<PooledRsaKey[] | undefined> {
  try {
    const keys = JSON.parse(await readFile(CACHE, 'utf8')) as PooledRsaKey[];
    if (!Array.isArray(keys) || keys.length !== KEY_POOL_SIZE) return undefined;
    for (const key of keys) {
      const details = createPrivateKey({ key: key as JsonWebKey, format: 'jwk' }).asymmetricKeyDetails;
      if (details?.modulusLength !== 2048 || details.publicExponent !== 65537n) return undefined;
    }
    return keys;
  } catch {
    return undefined;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  let keys = await keptKeys();
  if (keys === undefined) {
    const pairs = await Promise.all(Array.from({ length: KEY_POOL_SIZE }, () => generate('rsa', { modulusLength: 2048 })));
    keys = pairs.map(({ privateKey }) => privateKey.export({ format: 'jwk' }) as PooledRsaKey);
    await mkdir(dirname(CACHE), { recursive: true });
    await writeFile(`${CACHE}.tmp`, JSON.stringify(keys), { mode: 0o600 });
    await rename(`${CACHE}.tmp`, CACHE);
  }
  project.provide('rsaKeyPool', keys);
}
