/**
 * A verifier that trusts the given test issuers, for the audience they mint tokens for.
 *
 * @module paygate-auth/testing
 */
import { IssuerRegistry } from '../core/registry.js';
import { type Verifier, type VerifierOptions, createVerifier } from '../core/verifier.js';
import type { TestIssuer } from './test-issuer.js';

/** Verifier options for {@link createTestVerifier}: `registry` comes from the issuers. */
export type TestVerifierOptions = Omit<VerifierOptions, 'registry' | 'audience'> & {
  /** @default the first issuer's audience */
  readonly audience?: string | readonly string[];
};

/** A verifier whose registry holds exactly `issuers` (their `entry` as it is now). */
export function createTestVerifier(issuers: TestIssuer | readonly TestIssuer[], options: TestVerifierOptions = {}): Verifier {
  const list: readonly TestIssuer[] = Array.isArray(issuers) ? issuers : [issuers as TestIssuer];
  const first = list[0];
  if (first === undefined) throw new TypeError('createTestVerifier: give at least one test issuer');
  return createVerifier({
    ...options,
    registry: new IssuerRegistry(list.map((issuer) => issuer.entry)),
    audience: options.audience ?? first.audience,
  });
}
