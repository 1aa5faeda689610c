/**
 * The verifiers the benchmarks compare, each a function `input → result` (or a promise of it) that
 * throws on a bad token: raw `crypto.verify` (the RSA step alone), paygate-auth through its public
 * API, and the peers configured comparably (signature, `iss`, `aud` and expiry checked; keys
 * loaded up front; no cache unless the row says so).
 */
import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import { JwtVerifier } from 'aws-jwt-verify';
import { createVerifier as createFastJwtVerifier } from 'fast-jwt';
import { importJWK, jwtVerify } from 'jose';
import jsonwebtoken from 'jsonwebtoken';
import { IssuerRegistry, createVerifier } from 'paygate-auth';
import { AUDIENCE, ISSUER, PRODUCT } from './tokens.mjs';

/** The installed version of package `name` (`../` for paygate-auth itself). */
export function versionOf(name) {
  return JSON.parse(readFileSync(new URL(`../../node_modules/${name}/package.json`, import.meta.url), 'utf8')).version;
}

/** `crypto.verify` over prepared bytes (see `rawParts`) with a `KeyObject` built once. */
export function rawVerify(key) {
  return (parts) => {
    if (!crypto.verify('sha256', parts.data, key.publicKey, parts.signature)) throw new Error('invalid signature');
  };
}

/** The same check through `crypto.verify`'s callback form, which runs in libuv's pool. */
export function rawVerifyCallback(key) {
  return (parts) =>
    new Promise((resolve, reject) => {
      crypto.verify('sha256', parts.data, key.publicKey, parts.signature, (error, valid) => {
        if (error || !valid) reject(error ?? new Error('invalid signature'));
        else resolve();
      });
    });
}

/** An address nothing answers on: the keys are handed over up front, so no download is needed. */
const JWKS_URI = 'http://127.0.0.1:9/.well-known/jwks.json';

/**
 * A paygate-auth verifier holding `jwk` from the start (as `exportKeys()` would hand it over),
 * built by `create` (`createVerifier`, or an instrumented one's).
 */
export async function paygateVerifier(jwk, options = {}, create = createVerifier) {
  const registry = new IssuerRegistry([{ issuer: ISSUER, jwksUri: JWKS_URI, products: [PRODUCT] }]);
  const keys = { version: 1, issuers: [{ issuer: ISSUER, jwksUri: JWKS_URI, fetchedAt: Date.now(), keys: [jwk] }] };
  const verifier = create({ registry, audience: AUDIENCE, keys, ...options });
  await verifier.warmUp();
  return verifier;
}

export function fastJwtVerify(key, cache) {
  return createFastJwtVerifier({
    key: key.pem,
    algorithms: ['RS256'],
    allowedIss: ISSUER,
    allowedAud: AUDIENCE,
    cache,
  });
}

export function awsJwtVerify(key) {
  const verifier = JwtVerifier.create({
    issuer: ISSUER,
    audience: AUDIENCE,
    jwksUri: `${ISSUER}/.well-known/jwks.json`,
  });
  verifier.cacheJwks({ keys: [key.jwk] });
  return (token) => verifier.verifySync(token);
}

export async function joseVerify(key) {
  const cryptoKey = await importJWK(key.jwk, 'RS256');
  const options = { issuer: ISSUER, audience: AUDIENCE, algorithms: ['RS256'] };
  return (token) => jwtVerify(token, cryptoKey, options);
}

export function jsonwebtokenVerify(key) {
  const options = { algorithms: ['RS256'], issuer: ISSUER, audience: AUDIENCE };
  return (token) => jsonwebtoken.verify(token, key.pem, options);
}

/** Runs `op` on `count` inputs from `start`, `lanes` at a time, each lane awaiting its own. */
export async function inFlight(op, inputs, start, count, lanes) {
  let next = 0;
  const lane = async () => {
    while (next < count) await op(inputs[start + next++]);
  };
  await Promise.all(Array.from({ length: lanes }, lane));
}

/**
 * Throws unless `verify` accepts `valid` and refuses every token of `bad`: a verifier that accepts
 * a bad token voids the run.
 */
export async function qualify(label, verify, valid, bad) {
  await verify(valid);
  for (const [kind, token] of Object.entries(bad)) {
    const accepted = await Promise.resolve()
      .then(() => verify(token))
      .then(
        () => true,
        () => false,
      );
    if (accepted) throw new Error(`${label} accepted a ${kind} token: the benchmark is void`);
  }
}
