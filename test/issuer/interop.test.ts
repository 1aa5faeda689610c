import { spawnSync } from 'node:child_process';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { InMemoryKeyStore, createIssuer } from '../../src/issuer/index.js';
import { fakeClock } from '../support/jwks-clock.js';

const ISS = 'https://auth.acme.example';
const AUD = 'https://payments.example';
const clock = fakeClock(Date.now() - 7200_000);
const issuer = await createIssuer({
  issuer: ISS,
  audience: AUD,
  product: 'acme',
  keyStore: new InMemoryKeyStore(),
  now: clock.now,
});
clock.advance(7200 - 5);
const token = await issuer.sign({
  tenant: 'ern:acme/tenants/t-1',
  scopes: ['pay:processPayments'],
  tenantName: 'Acme Clinic',
  user: '//users/u-1',
});
const CLAIMS = ['aud', 'exp', 'expt', 'iat', 'iss', 'nbf', 'scope', 'sub', 'tenant_ern', 'tenant_name', 'user_ern'];

/** PyJWT (with `cryptography` for RS256) is needed; this machine has no PyPI access to install it. */
const hasPyJwt = spawnSync('python3', ['-c', 'import jwt, cryptography'], { encoding: 'utf8' }).status === 0;

describe("the issuer's tokens in other libraries", () => {
  it('verify with jose against the published JWKS, with the header and claims of the contract', async () => {
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(issuer.jwks().document as never), {
      issuer: ISS,
      audience: AUD,
      algorithms: ['RS256'],
      typ: 'JWT',
      requiredClaims: ['exp', 'iat', 'nbf', 'sub'],
    });
    expect(Object.keys(protectedHeader).sort()).toEqual(['alg', 'kid', 'typ']);
    expect(Object.keys(payload).sort()).toEqual(CLAIMS);
    expect(payload.sub).toBe(payload.iss);
    expect(payload.exp).toBe(payload.expt);
  });

  it.skipIf(!hasPyJwt)('verify with PyJWT (SKIPPED when python3 lacks the jwt and cryptography modules)', () => {
    const script = [
      'import json, sys, jwt',
      'given = json.load(sys.stdin)',
      'key = jwt.PyJWK(given["jwk"]).key',
      'claims = jwt.decode(given["token"], key, algorithms=["RS256"], audience=given["aud"], issuer=given["iss"])',
      'print(json.dumps({"header": jwt.get_unverified_header(given["token"]), "claims": sorted(claims)}))',
    ].join('\n');
    const [jwk] = issuer.jwks().document.keys;
    const run = spawnSync('python3', ['-c', script], {
      input: JSON.stringify({ token, jwk, aud: AUD, iss: ISS }),
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    const result = JSON.parse(run.stdout) as { header: Record<string, unknown>; claims: string[] };
    expect(Object.keys(result.header).sort()).toEqual(['alg', 'kid', 'typ']);
    expect(result.claims).toEqual(CLAIMS);
  });
});
