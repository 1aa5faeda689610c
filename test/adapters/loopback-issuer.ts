/** A test issuer whose JWKS is served by a real server on 127.0.0.1, and a verifier trusting it. */
import { afterAll, beforeAll } from 'vitest';
import type { Verifier } from '../../src/core/verifier.js';
import { type TestIssuer, createTestIssuer, createTestVerifier } from '../../src/testing/index.js';

export interface LoopbackIssuer {
  readonly issuer: TestIssuer;
  readonly verifier: Verifier;
}

/** Registers hooks that start the issuer's JWKS server before the tests and close it after. */
export function useLoopbackIssuer(): LoopbackIssuer {
  let issuer: TestIssuer | undefined;
  let verifier: Verifier | undefined;
  beforeAll(async () => {
    issuer = await createTestIssuer();
    await issuer.listen();
    verifier = createTestVerifier(issuer);
  });
  afterAll(() => issuer?.close());
  return {
    get issuer() {
      if (issuer === undefined) throw new Error('useLoopbackIssuer: read it inside a test');
      return issuer;
    },
    get verifier() {
      if (verifier === undefined) throw new Error('useLoopbackIssuer: read it inside a test');
      return verifier;
    },
  };
}
