/**
 * The tokens of the load run, minted before it starts (signing costs a millisecond each, so none
 * is signed while the gateway is under load):
 *
 * - valid: minted by the example's own `mintToken` with the demo key the running gateway trusts;
 * - expired: the demo key's signature over claims that expired an hour ago;
 * - forged: another key under the demo `kid`, an unknown `kid`, a payload swapped under a real
 *   signature, `alg: none`, `alg: HS256` keyed with the public key, a truncated signature;
 * - wrong tenant: the demo key's signature for a product the issuer is not registered for, and
 *   the public tenant (which may not create links);
 * - wrong scope: a scope the route does not accept.
 */
import { createHmac } from 'node:crypto';
import { AUDIENCE, ISSUER, TENANT_NAMES, mintToken } from '../gateway/demo.mjs';
import { encodeSegment, generateTestKey, signRawToken } from 'paygate-auth/testing';

/** The two private demo tenants and their ids. */
export const TENANTS = Object.freeze(['clinic-1', 'clinic-2']);

const CREATE_SCOPE = 'pay:processPayments';

/** Claims as the demo integration writes them, for the tokens `mintToken` cannot make. */
function demoClaims({ tenant, scope = CREATE_SCOPE, user = 'load', issuedAgo = 0, lifetime = 3600, product = 'demo' }) {
  const iat = Math.floor(Date.now() / 1000) - issuedAgo;
  const id = tenant;
  return {
    iss: ISSUER,
    sub: ISSUER,
    aud: AUDIENCE,
    iat,
    expt: iat + lifetime,
    tenant_ern: `ern:${product}/tenants/${id}`,
    tenant_name: Object.hasOwn(TENANT_NAMES, id) ? TENANT_NAMES[id] : id,
    scope,
    user_ern: `//users/${user}`,
  };
}

const header = (key, extra = {}) => ({ alg: 'RS256', typ: 'JWT', kid: key.kid, ...extra });

/** `count` items made by `make(index)`, awaited together. */
const many = (count, make) => Promise.all(Array.from({ length: count }, (_, index) => make(index)));

async function forgedTokens(key, count) {
  const [stranger, strangerWithOtherKid] = await Promise.all([
    generateTestKey({ kid: key.kid }),
    generateTestKey({ kid: 'rotated-out-2019' }),
  ]);
  const variants = [
    // Another key claiming the demo kid: the signature does not verify.
    (index) => signRawToken(stranger, header(stranger), demoClaims({ tenant: TENANTS[index % 2], user: `forger-${index}` })),
    // A kid the issuer never published: a key lookup (and at most one JWKS refetch per cooldown).
    (index) =>
      signRawToken(strangerWithOtherKid, header(strangerWithOtherKid, { kid: `unknown-${index}` }), demoClaims({ tenant: 'clinic-1' })),
    // A real signature over clinic-1's claims, with clinic-2's claims swapped in.
    async (index) => {
      const genuine = await mintToken(key, { tenant: 'clinic-1', user: `victim-${index}` });
      const [encodedHeader, , signature] = genuine.split('.');
      return `${encodedHeader}.${encodeSegment(demoClaims({ tenant: 'clinic-2', user: `victim-${index}` }))}.${signature}`;
    },
    // No signature at all.
    async (index) =>
      `${encodeSegment({ alg: 'none', typ: 'JWT', kid: key.kid })}.${encodeSegment(demoClaims({ tenant: 'clinic-1', user: `none-${index}` }))}.`,
    // HS256 keyed with the published public key (algorithm confusion).
    async (index) => {
      const input = `${encodeSegment({ alg: 'HS256', typ: 'JWT', kid: key.kid })}.${encodeSegment(demoClaims({ tenant: 'clinic-1', user: `hs-${index}` }))}`;
      return `${input}.${createHmac('sha256', JSON.stringify(key.publicJwk)).update(input).digest('base64url')}`;
    },
    // A real token with its signature cut short.
    async (index) => (await mintToken(key, { tenant: 'clinic-1', user: `cut-${index}` })).slice(0, -12),
  ];
  return many(count, (index) => variants[index % variants.length](index));
}

/**
 * Every token class, as arrays to pick from.
 * @param {import('paygate-auth/testing').TestKey} key the demo key the gateway publishes
 * @param {{ users: number }} options distinct valid tokens per tenant
 */
export async function mintTokens(key, { users }) {
  const valid = Object.fromEntries(
    await Promise.all(
      TENANTS.map(async (tenant) => [
        tenant,
        await many(users, (index) => mintToken(key, { tenant, scope: CREATE_SCOPE, user: `u-${index}` })),
      ]),
    ),
  );
  const [expired, forged, foreignProduct, publicTenant, wrongScopeCreate, noGatewayScope] = await Promise.all([
    many(32, (index) =>
      signRawToken(key, header(key), demoClaims({ tenant: TENANTS[index % 2], user: `late-${index}`, issuedAgo: 7200, lifetime: 3600 })),
    ),
    forgedTokens(key, 60),
    many(16, (index) => signRawToken(key, header(key), demoClaims({ tenant: `t-${index}`, product: 'other-product' }))),
    many(8, (index) => mintToken(key, { tenant: 'public', user: `system-${index}` })),
    many(8, (index) => mintToken(key, { tenant: 'clinic-1', scope: 'hub:subscribe', user: `hub-${index}` })),
    many(8, (index) => mintToken(key, { tenant: 'clinic-1', scope: 'openid profile', user: `plain-${index}` })),
  ]);
  return { valid, expired, forged, foreignProduct, publicTenant, wrongScopeCreate, noGatewayScope };
}
