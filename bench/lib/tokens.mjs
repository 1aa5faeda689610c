/**
 * Keys and tokens for the benchmarks: RS256 with a 2048-bit key and the gateway's claim set
 * (iss, sub = iss, aud, iat, exp and expt equal so every peer checks expiry, tenant_ern,
 * tenant_name, scope, user_ern). Tokens are signed with node:crypto; many at once go through the
 * callback form of `crypto.sign`, which runs in libuv's thread pool on every core.
 */
import crypto from 'node:crypto';

/** The `iss` of the benchmark tokens (the JWKS server's origin aside, in the HTTP benchmarks). */
export const ISSUER = 'https://issuer.bench.example';
export const AUDIENCE = 'https://payments.bench.example';
export const PRODUCT = 'acme';
export const TENANT = 'ern:acme/tenants/t-1';
export const SCOPE = 'pay:processPayments';
/** Lifetime of the benchmark tokens, in seconds (long enough for any run, under the 24 h maximum). */
export const LIFETIME = 3 * 3600;

/** A fresh RS256 key pair with its published JWK and PEM. */
export function createBenchKey(kid = 'bench-key-1') {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = Object.freeze({ ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' });
  const pem = publicKey.export({ format: 'pem', type: 'spki' });
  return { kid, privateKey, publicKey, jwk, pem };
}

/** The gateway's claim set for token number `n` (distinct by its user), with `overrides` applied. */
export function claimsFor(issuer, n, overrides = {}) {
  const iat = Math.floor(Date.now() / 1000);
  return {
    iss: issuer,
    sub: issuer,
    aud: AUDIENCE,
    iat,
    exp: iat + LIFETIME,
    expt: iat + LIFETIME,
    tenant_ern: TENANT,
    tenant_name: 'Acme Clinic',
    scope: SCOPE,
    user_ern: `${TENANT}/users/u-${n}`,
    ...overrides,
  };
}

const segment = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * `text` as one flat string, as an HTTP parser hands a header over. A string built with `+` or a
 * template is a rope that V8 flattens (copies) on first inspection: left as is, every verifier's
 * first look at a distinct token would pay for that copy.
 */
export function flat(text) {
  return Buffer.from(text, 'latin1').toString('latin1');
}

function headerFor(key) {
  return { alg: 'RS256', typ: 'JWT', kid: key.kid };
}

/** Signs one token synchronously. */
export function signToken(key, claims, header = headerFor(key)) {
  const input = `${segment(header)}.${segment(claims)}`;
  return flat(`${input}.${crypto.sign('sha256', Buffer.from(input), key.privateKey).toString('base64url')}`);
}

/** Signs `claims` in the thread pool. */
export function signTokenAsync(key, claims, header = headerFor(key)) {
  const input = `${segment(header)}.${segment(claims)}`;
  return new Promise((resolve, reject) => {
    crypto.sign('sha256', Buffer.from(input), key.privateKey, (error, signature) => {
      if (error) reject(error);
      else resolve(flat(`${input}.${signature.toString('base64url')}`));
    });
  });
}

/** `count` distinct tokens (numbers `start`…), signed 64 at a time in the thread pool. */
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

/**
 * Tokens every verifier must refuse, each signed by the same key unless said otherwise: a payload
 * edited after signing (scope raised, signature kept), another issuer, another audience, expired.
 */
export function negativeTokens(key, issuer) {
  const valid = signToken(key, claimsFor(issuer, -1));
  const [header, , signature] = valid.split('.');
  const raised = segment(claimsFor(issuer, -1, { scope: 'pay:manageIntegration pay:processPayments' }));
  const past = Math.floor(Date.now() / 1000) - 7200;
  return {
    tampered: flat(`${header}.${raised}.${signature}`),
    wrongIssuer: signToken(key, claimsFor('https://issuer.attacker.example', -2, { sub: 'https://issuer.attacker.example' })),
    wrongAudience: signToken(key, claimsFor(issuer, -3, { aud: 'https://elsewhere.example' })),
    expired: signToken(key, claimsFor(issuer, -4, { iat: past, exp: past + 3600, expt: past + 3600 })),
  };
}

/** The exact signed bytes and signature of a token, for the raw `crypto.verify` baseline. */
export function rawParts(token) {
  const dot = token.lastIndexOf('.');
  return { data: Buffer.from(token.slice(0, dot)), signature: Buffer.from(token.slice(dot + 1), 'base64url') };
}
