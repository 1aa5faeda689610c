import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RsaPublicJwk } from '../../src/index.js';
import {
  IssuerError,
  KeyStoreError,
  type SignTokenOptions,
  type SigningKey,
  generateKeyFile,
  readPrivateKeyFile,
  signToken,
} from '../../src/issuer/index.js';

const ISS = 'https://auth.acme.example';
const AUD = 'https://payments.example';
const NOW = Date.UTC(2026, 0, 1);
const INPUT = { tenant: 'ern:acme/tenants/t-1', scopes: ['pay:processPayments'] };
let directory: string;
let jwk: RsaPublicJwk;
let key: SigningKey;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'paygate-sign-token-'));
  jwk = await generateKeyFile(join(directory, 'key.pem'));
  key = await readPrivateKeyFile(join(directory, 'key.pem'));
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

const options = (extra: Partial<SignTokenOptions> = {}): SignTokenOptions => ({
  key,
  issuer: ISS,
  audience: AUD,
  now: () => NOW,
  ...extra,
});

async function refusal(promise: Promise<unknown>): Promise<{ code: string; field: string | undefined } | undefined> {
  const error: unknown = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  return error instanceof IssuerError ? { code: error.code, field: error.field } : undefined;
}

describe('signToken', () => {
  it("signs the contract's header and claims with the key, verifiable against its public JWK", async () => {
    const token = await signToken(INPUT, options());
    expect(decodeProtectedHeader(token)).toStrictEqual({ alg: 'RS256', typ: 'JWT', kid: jwk.kid });
    const { payload } = await jwtVerify(token, createLocalJWKSet({ keys: [{ ...jwk }] }), {
      issuer: ISS,
      audience: AUD,
      currentDate: new Date(NOW),
    });
    expect(payload).toStrictEqual({
      iss: ISS,
      sub: ISS,
      aud: AUD,
      scope: 'pay:processPayments',
      iat: NOW / 1000,
      nbf: NOW / 1000,
      exp: NOW / 1000 + 300,
      expt: NOW / 1000 + 300,
      tenant_ern: INPUT.tenant,
    });
  });

  it('takes a promise of the key, such as readPrivateKeyFile resolves', async () => {
    const token = await signToken(INPUT, options({ key: readPrivateKeyFile(join(directory, 'key.pem'), { kid: 'k-1' }) }));
    expect(decodeProtectedHeader(token).kid).toBe('k-1');
  });

  it('refuses the claims before it waits for a key that fails', async () => {
    const failing = Promise.reject(new KeyStoreError('invalid_key_file', 'not a key'));
    expect(await refusal(signToken({ ...INPUT, scopes: ['pay:refund'] }, options({ key: failing })))).toStrictEqual({
      code: 'invalid_scope',
      field: 'scopes',
    });
  });

  it('refuses a tenant of a product other than those given', async () => {
    expect(await refusal(signToken(INPUT, options({ product: 'globex' })))).toStrictEqual({
      code: 'tenant_not_allowed',
      field: 'tenant',
    });
  });

  it.each([
    [{ lifetime: 1.5 }, 'invalid_lifetime', 'got 1.5'],
    [{ lifetime: '600' }, 'invalid_lifetime', 'got "600"'],
    [{ tenantName: '  ' }, 'invalid_tenant_name', 'got "  "'],
  ])('refuses the input %j, naming the value found', async (extra, code, found) => {
    const error = await signToken({ ...INPUT, ...(extra as object) }, options()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(IssuerError);
    expect([(error as IssuerError).code, (error as IssuerError).message]).toEqual([code, expect.stringContaining(found)]);
  });

  it('refuses a lifetime over maxLifetime, and caps the default lifetime by it', async () => {
    expect(await refusal(signToken({ ...INPUT, lifetime: 61 }, options({ maxLifetime: 60 })))).toStrictEqual({
      code: 'lifetime_exceeded',
      field: 'lifetime',
    });
    const claims = decodeJwt(await signToken(INPUT, options({ maxLifetime: 60 })));
    expect(claims.expt).toBe(NOW / 1000 + 60);
  });

  it('refuses a kid over 256 characters, which a gateway refuses as missing_kid (invalid_kid)', async () => {
    const long = { ...key, kid: 'k'.repeat(257) };
    expect(await refusal(signToken(INPUT, options({ key: long })))).toEqual({ code: 'invalid_kid', field: 'kid' });
  });

  it('signs with a kid of 256 characters, the longest a gateway accepts', async () => {
    const token = await signToken(INPUT, options({ key: { ...key, kid: 'k'.repeat(256) } }));
    expect(decodeProtectedHeader(token).kid).toHaveLength(256);
  });

  it('writes only expt with emitExp false', async () => {
    expect(decodeJwt(await signToken(INPUT, options({ emitExp: false })))).not.toHaveProperty('exp');
  });

  it.each([
    ['auth.acme.example', 'got "auth.acme.example"'],
    ['http://auth.acme.example', 'got "http://auth.acme.example"'],
    ['https://user:pass@auth.acme.example', 'got a URI carrying credentials'],
  ])('refuses the issuer %j, which no gateway registers, naming the rule and the value', async (issuer, found) => {
    const error = await signToken(INPUT, options({ issuer })).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(
      /^signToken: issuer must be an https: URI without credentials \(http: only on a loopback host\)/,
    );
    expect((error as Error).message).toContain(found);
    expect((error as Error).message).not.toContain('pass');
  });

  it('takes an http: issuer on a loopback host (tests, examples)', async () => {
    expect(decodeJwt(await signToken(INPUT, options({ issuer: 'http://127.0.0.1:8080' }))).iss).toBe('http://127.0.0.1:8080');
  });

  it.each([
    [{ maxLifetime: 8 * 86_400 }, /maxLifetime/],
    [{ audience: [] }, /audience/],
    [{ issuer: '' }, /issuer/],
    [{ lifetime: 60 } as Partial<SignTokenOptions>, /unknown option "lifetime"/],
  ])('refuses the option %j, naming it', async (extra, message) => {
    await expect(signToken(INPUT, options(extra))).rejects.toThrow(message);
  });
});
