/**
 * paygate-auth verifiers for the benchmark scripts that need no JWKS server: the registry names an
 * address nothing answers on, and the keys are handed over as another verifier's `exportKeys()`
 * would hand them, so that no download is needed, or attempted.
 */
import { IssuerRegistry, createVerifier } from 'paygate-auth';
import { AUDIENCE, ISSUER, PRODUCT } from './tokens.mjs';

const JWKS_URI = 'http://127.0.0.1:9/.well-known/jwks.json';

/** A verifier of {@link ISSUER}'s tokens holding `jwk` from the start, with `options` applied. */
export async function offlineVerifier(jwk, options = {}) {
  const registry = new IssuerRegistry([{ issuer: ISSUER, jwksUri: JWKS_URI, products: [PRODUCT] }]);
  const keys = { version: 1, issuers: [{ issuer: ISSUER, jwksUri: JWKS_URI, fetchedAt: Date.now(), keys: [jwk] }] };
  const verifier = createVerifier({ registry, audience: AUDIENCE, keys, ...options });
  await verifier.warmUp();
  return verifier;
}
