/**
 * The peers, each configured as its documentation suggests for an RS256 bearer token with a known
 * key, and each checking the signature, `iss`, `aud` and expiry. Every verifier is a function
 * `token → payload` (sync) or `token → Promise<payload>` that throws on a bad token.
 */
import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import { JwtVerifier } from 'aws-jwt-verify';
import { createVerifier as createFastJwtVerifier } from 'fast-jwt';
import { importJWK, jwtVerify } from 'jose';
import jsonwebtoken from 'jsonwebtoken';
import { AUDIENCE } from './tokens.mjs';

/** The installed version of package `name` (read from node_modules, whatever its exports allow). */
export function versionOf(name) {
  const url = new URL(`../../node_modules/${name}/package.json`, import.meta.url);
  return JSON.parse(readFileSync(url, 'utf8')).version;
}

/** `crypto.verify` over prepared bytes with a prepared `KeyObject`: the RSA step alone. */
export function rawVerifier(key) {
  const sync = (parts) => {
    if (!crypto.verify('sha256', parts.data, key.publicKey, parts.signature)) throw new Error('invalid signature');
  };
  const pooled = (parts) =>
    new Promise((resolve, reject) => {
      crypto.verify('sha256', parts.data, key.publicKey, parts.signature, (error, valid) => {
        if (error || !valid) reject(error ?? new Error('invalid signature'));
        else resolve();
      });
    });
  return { sync, pooled };
}

export function fastJwtVerifier(key, issuer, cache) {
  return createFastJwtVerifier({
    key: key.pem,
    algorithms: ['RS256'],
    allowedIss: issuer,
    allowedAud: AUDIENCE,
    cache,
  });
}

export function awsJwtVerifier(key, issuer) {
  const verifier = JwtVerifier.create({ issuer, audience: AUDIENCE, jwksUri: `${issuer}/.well-known/jwks.json` });
  verifier.cacheJwks({ keys: [key.jwk] });
  return (token) => verifier.verifySync(token);
}

export async function joseVerifier(key, issuer) {
  const cryptoKey = await importJWK(key.jwk, 'RS256');
  const options = { issuer, audience: AUDIENCE, algorithms: ['RS256'] };
  return (token) => jwtVerify(token, cryptoKey, options);
}

export function jsonwebtokenVerifier(key, issuer) {
  const options = { algorithms: ['RS256'], issuer, audience: AUDIENCE };
  return (token) => jsonwebtoken.verify(token, key.pem, options);
}
