/**
 * The verifiers whose instructions `bench/instructions.mjs` counts, configured as `bench/micro.mjs`
 * times them. Each case makes, from the key, `{ op, sync, input, check }`: `op(input)` verifies one
 * token (awaited unless `sync`), `input` says what it takes (`token`, `header` or `parts`), and
 * `check(result)`, when given, is the caller's own check of the result.
 */
import { authenticate } from 'paygate-auth';
import { offlineVerifier } from '../lib/offline-verifier.mjs';
import { awsJwtVerifier, fastJwtVerifier, joseVerifier, jsonwebtokenVerifier, rawVerifier } from '../lib/peers.mjs';
import { ISSUER } from '../lib/tokens.mjs';

const SCOPE = 'pay:processPayments';
const SCOPES = Object.freeze([SCOPE]);

function hasScope(auth) {
  if (!auth.scopes.has(SCOPE)) throw new Error('the token lacks the scope');
}

function isAuthenticated(result) {
  if (!result.ok) throw result.error;
}

const verifyCase = async (key, options) => {
  const verifier = await offlineVerifier(key.jwk, options);
  return { op: (token) => verifier.verify(token), sync: false, input: 'token', check: hasScope };
};

/**
 * `slow` cases take a quarter of the verifications: their instructions per verification are many
 * times the others', and their share of JIT warm-up no concern.
 */
export const CASES = Object.freeze([
  {
    id: 'raw',
    label: 'node:crypto `crypto.verify`, prepared KeyObject (the RSA step alone)',
    mode: 'cold',
    make: (key) => ({ op: rawVerifier(key).sync, sync: true, input: 'parts' }),
  },
  { id: 'paygate', label: 'paygate-auth `verify()` + scope check', mode: 'cold', make: (key) => verifyCase(key, {}) },
  {
    id: 'paygateOff',
    label: 'paygate-auth `verify()` + scope check, `cache: false`',
    mode: 'cold',
    make: (key) => verifyCase(key, { cache: false }),
  },
  {
    id: 'paygateAuthenticate',
    label: 'paygate-auth `authenticate()` (Authorization header, verify, scope policy)',
    mode: 'cold',
    make: async (key) => {
      const verifier = await offlineVerifier(key.jwk);
      return { op: (authorization) => authenticate(verifier, { authorization, requiredScopes: SCOPES }), sync: false, input: 'header', check: isAuthenticated };
    },
  },
  {
    id: 'fastUncached',
    label: 'fast-jwt, PEM key, no cache',
    mode: 'cold',
    make: (key) => ({ op: fastJwtVerifier(key, ISSUER, false), sync: true, input: 'token' }),
  },
  {
    id: 'aws',
    label: 'aws-jwt-verify `verifySync`, hydrated JWKS',
    mode: 'cold',
    make: (key) => ({ op: awsJwtVerifier(key, ISSUER), sync: true, input: 'token' }),
  },
  {
    id: 'jose',
    label: 'jose `jwtVerify`, imported JWK (WebCrypto)',
    mode: 'cold',
    slow: true,
    make: async (key) => ({ op: await joseVerifier(key, ISSUER), sync: false, input: 'token' }),
  },
  {
    id: 'jwt',
    label: 'jsonwebtoken, PEM key',
    mode: 'cold',
    slow: true,
    make: (key) => ({ op: jsonwebtokenVerifier(key, ISSUER), sync: true, input: 'token' }),
  },
  { id: 'paygateWarm', label: 'paygate-auth `verify()` + scope check', mode: 'warm', make: (key) => verifyCase(key, {}) },
  {
    id: 'fastCachedWarm',
    label: 'fast-jwt, PEM key, `cache: true`',
    mode: 'warm',
    make: (key) => ({ op: fastJwtVerifier(key, ISSUER, true), sync: true, input: 'token' }),
  },
]);
