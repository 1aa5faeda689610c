/**
 * Bringing a token into a verifier's result cache, for tests of what happens to cached results.
 */
import { expect } from 'vitest';
import type { AuthContext, Verifier } from '../../src/index.js';

/**
 * Verifies `token` until `verifier` answers it from its result cache (by default a token is cached
 * on its second use) and returns the cached context. Fails the test when the third verification
 * is not the cached answer, so a test built on a cached result cannot pass without one.
 */
export async function verifyUntilCached(verifier: Verifier, token: string): Promise<AuthContext> {
  await verifier.verify(token);
  const cached = await verifier.verify(token);
  expect(await verifier.verify(token), 'the token is answered from the result cache').toBe(cached);
  return cached;
}
