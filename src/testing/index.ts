/**
 * paygate-auth/testing: issuers, keys, JWKS endpoints and tokens for tests. Nothing here touches
 * the network beyond 127.0.0.1, and nothing here needs msw (`paygate-auth/testing/msw` does).
 *
 * @module paygate-auth/testing
 */
export {
  type AddKeyOptions,
  type JwksRequestHandler,
  type RotateOptions,
  type TestClaims,
  type TestHeader,
  type TestIssuer,
  type TestIssuerOptions,
  createTestIssuer,
} from './test-issuer.js';
export { type JwksServer, type ServeJwksOptions, serveJwks } from './jwks-server.js';
export {
  type PublishedJwk,
  type SignRawTokenOptions,
  type TestKey,
  type TestKeyOptions,
  type TestSigningAlgorithm,
  encodeSegment,
  generateTestKey,
  signRawToken,
} from './test-key.js';
export { type TestVerifierOptions, createTestVerifier } from './test-verifier.js';
