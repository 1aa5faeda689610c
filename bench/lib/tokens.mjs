/**
 * Keys and tokens for the benchmarks: RS256, a 2048-bit key, the gateway's claim set (iss,
 * sub = iss, aud, iat, exp and expt, tenant_ern, tenant_name, scope, user_ern). Signed with
 * node:crypto; many at once through the callback form of `crypto.sign`, which runs in libuv's pool.
 */
import crypto from 'node:crypto';

export const ISSUER = 'https://issuer.bench.example';
export const AUDIENCE = 'https://payments.bench.example';
export const PRODUCT = 'acme';
const TENANT = 'ern:acme/tenants/t-1';
/** Lifetime of the tokens, in seconds: long enough for any run. */
const LIFETIME = 3 * 3600;

/** A fresh RS256 key pair with its published JWK and PEM. */
export function createBenchKey(kid = 'bench-key-1') {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = Object.freeze({ ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' });
  return { kid, privateKey, publicKey, jwk, pem: publicKey.export({ format: 'pem', type: 'spki' }) };
}

/** The gateway's claim set for token number `n` (distinct by its user), with `overrides` applied. */
export function claimsFor(issuer, n, overrides = {}) {
  const iat = Math.floor(Date.now() / 1000);
  const exp = iat + LIFETIME;
  const user_ern = `${TENANT}/users/u-${n}`;
  return {
    iss: issuer,
    sub: issuer,
    aud: AUDIENCE,
    iat,
    exp,
    expt: exp,
    tenant_ern: TENANT,
    tenant_name: 'Acme Clinic',
    scope: 'pay:processPayments',
    user_ern,
    ...overrides,
  };
}

const segment = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
const signingInput = (key, claims) => `${segment({ alg: 'RS256', typ: 'JWT', kid: key.kid })}.${segment(claims)}`;

/**
 * `text` as one flat string, as an HTTP parser hands a header over (a string built with `+` is a
 * rope, which V8 would copy on every verifier's first look at it).
 */
export function flat(text) {
  return Buffer.from(text, 'latin1').toString('latin1');
}

export function signToken(key, claims) {
  const input = signingInput(key, claims);
  return flat(`${input}.${crypto.sign('sha256', Buffer.from(input), key.privateKey).toString('base64url')}`);
}

/** Signs `claims` in libuv's pool. */
export function signTokenAsync(key, claims) {
  const input = signingInput(key, claims);
  return new Promise((resolve, reject) => {
    crypto.sign('sha256', Buffer.from(input), key.privateKey, (error, signature) => {
      if (error) reject(error);
      else resolve(flat(`${input}.${signature.toString('base64url')}`));
    });
  });
}

/** `count` distinct tokens (numbers `start`…), signed 64 at a time in the pool. */
export async function signMany(key, issuer, count, start = 0) {
  const tokens = new Array(count);
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const index = next++;
      tokens[index] = await signTokenAsync(key, claimsFor(issuer, start + index));
    }
  };
  await Promise.all(Array.from({ length: 64 }, lane));
  return tokens;
}

/** Tokens every verifier must refuse: payload edited after signing, another issuer or audience, expired. */
export function badTokens(key, issuer) {
  const [header, , signature] = signToken(key, claimsFor(issuer, -1)).split('.');
  const past = Math.floor(Date.now() / 1000) - 7200;
  const attacker = 'https://issuer.attacker.example';
  return {
    tampered: flat(`${header}.${segment(claimsFor(issuer, -1, { scope: 'pay:manageIntegration' }))}.${signature}`),
    wrongIssuer: signToken(key, claimsFor(attacker, -2, { sub: attacker })),
    wrongAudience: signToken(key, claimsFor(issuer, -3, { aud: 'https://elsewhere.example' })),
    expired: signToken(key, claimsFor(issuer, -4, { iat: past, exp: past + 3600, expt: past + 3600 })),
  };
}

/** The signed bytes and the signature of a token, for raw `crypto.verify`. */
export function rawParts(token) {
  const dot = token.lastIndexOf('.');
  return { data: Buffer.from(token.slice(0, dot)), signature: Buffer.from(token.slice(dot + 1), 'base64url') };
}
