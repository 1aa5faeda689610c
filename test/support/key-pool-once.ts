/**
 * RSA key pairs for the whole test run (vitest `globalSetup`), made once and shared: a 2048-bit
 * key takes the platform a tenth of a second or more of CPU, and the tests ask for some 250.
 * WebCrypto's `generateKey` hands them out in every test file (key-pool.ts, vitest `setupFiles`).
 * Made in parallel, on Node's thread pool.
 */
import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import type {} from './key-pool.js';

const generate = promisify(generateKeyPair);

/** How many distinct keys the pool holds: well over the most one test asks for (3). */
const KEY_POOL_SIZE = 16;

export default async function setup(project: TestProject): Promise<void> {
  const pairs = await Promise.all(Array.from({ length: KEY_POOL_SIZE }, () => generate('rsa', { modulusLength: 2048 })));
  project.provide(
    'rsaKeyPool',
    pairs.map(({ privateKey }) => privateKey.export({ format: 'jwk' })),
  );
}
