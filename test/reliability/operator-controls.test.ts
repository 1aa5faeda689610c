/**
 * Controls for a gateway in production: suspend an issuer, revoke one key, warm the key cache up,
 * and export it so that a short-lived runtime starts warm. Each takes effect at once, cached results
 * included. JWKS served by real endpoints on 127.0.0.1.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { IssuerEntry, KeySnapshot } from '../../src/index.js';
import { type JwksServer, type TestIssuer, type TestKey, createTestIssuer } from '../../src/testing/index.js';
import { fakeClock } from '../support/jwks-clock.js';
import { refusedUrl } from '../support/jwks-fault-server.js';
import { authRejection } from '../support/jwks-rejection.js';
import { verifyUntilCached } from '../support/result-cache.js';
import { verifierFixture } from '../support/verifier-fixture.js';

const AUDIENCE = 'https://payments.test';
const clock = fakeClock();
let acme: TestIssuer;
let globex: TestIssuer;
let acmeServer: JwksServer;
let globexServer: JwksServer;
/** A second published key of acme. */
let acmeSpare: TestKey;
let down: IssuerEntry;

beforeAll(async () => {
  [acme, globex] = await Promise.all([
    createTestIssuer({
      audience: AUDIENCE,
      now: clock.now,
      issuer: 'https://acme.test',
      product: 'acme',
      kid: 'acme-1',
    }),
    createTestIssuer({
      audience: AUDIENCE,
      now: clock.now,
      issuer: 'https://globex.test',
      product: 'globex',
      kid: 'globex-1',
    }),
  ]);
  acmeSpare = await acme.addKey({ kid: 'acme-spare' });
  [acmeServer, globexServer] = await Promise.all([acme.listen(), globex.listen()]);
  down = { issuer: 'https://down.test', jwksUri: await refusedUrl(), products: ['initech'] };
});

afterAll(() => Promise.all([acme.close(), globex.close()]));

beforeEach(() => clock.advance(60));

const { verifier, log } = verifierFixture(() => ({ registry: [acme.entry, globex.entry], audience: AUDIENCE, now: clock.now }));

const hits = () => log.events.filter((event) => event.type === 'cache' && event.outcome === 'hit').length;

describe('suspendIssuer / resumeIssuer', () => {
  test("a suspended issuer's tokens fail at once with issuer_suspended, cached results included", async () => {
    const v = verifier();
    const cached = await acme.token();
    await verifyUntilCached(v, cached);
    const hitsBefore = hits();
    v.suspendIssuer(acme.issuer);
    const fromCache = await authRejection(v.verify(cached));
    const fresh = await authRejection(v.verify(await acme.token({ jti: 'fresh' })));
    expect([fromCache.code, fromCache.status, fresh.code]).toEqual(['issuer_suspended', 401, 'issuer_suspended']);
    expect(hits()).toBe(hitsBefore);
  });

  test('suspending one issuer leaves the others verifying', async () => {
    const v = verifier();
    v.suspendIssuer(acme.issuer);
    await expect(v.verify(await globex.token())).resolves.toMatchObject({ issuer: globex.issuer });
  });

  test('resumeIssuer lets its tokens verify again, from the cache where they were cached', async () => {
    const v = verifier();
    const cached = await acme.token();
    const context = await verifyUntilCached(v, cached);
    v.suspendIssuer(acme.issuer);
    await authRejection(v.verify(cached));
    v.resumeIssuer(acme.issuer);
    const hitsBefore = hits();
    await expect(v.verify(cached)).resolves.toBe(context);
    expect(hits()).toBe(hitsBefore + 1);
  });

  test("suspending a token's issuer does not download its keys", async () => {
    const before = acmeServer.requests;
    const v = verifier();
    v.suspendIssuer(acme.issuer);
    await authRejection(v.verify(await acme.token()));
    expect(acmeServer.requests).toBe(before);
  });

  test.each(['suspendIssuer', 'resumeIssuer'] as const)('%s of an issuer that is not registered is a TypeError', (method) => {
    expect(() => verifier()[method]('https://nobody.test')).toThrow(TypeError);
  });
});

describe('revokeKey', () => {
  test('a revoked key fails at once with key_revoked, cached results included, though the JWKS still lists it', async () => {
    const v = verifier();
    const cached = await acme.token();
    await verifyUntilCached(v, cached);
    v.revokeKey(acme.issuer, 'acme-1');
    const fromCache = await authRejection(v.verify(cached));
    const fresh = await authRejection(v.verify(await acme.token({ jti: 'fresh' })));
    expect([fromCache.code, fromCache.status, fresh.code]).toEqual(['key_revoked', 401, 'key_revoked']);
    expect(acme.jwks.keys.map((jwk) => jwk.kid)).toContain('acme-1');
  });

  test('a verification still in flight when its key is revoked leaves no result to answer later ones (attack: a revoked key kept alive by the cache)', async () => {
    const v = verifier();
    const [alone, token] = await Promise.all([acme.token({ jti: 'alone' }), acme.token({ jti: 'in-flight' })]);
    await v.verify(token);
    const settled = Promise.allSettled([v.verify(alone), v.verify(token)]);
    v.revokeKey(acme.issuer, 'acme-1');
    await settled;
    expect((await authRejection(v.verify(token))).code).toBe('key_revoked');
  });

  test("the issuer's other keys keep verifying", async () => {
    const v = verifier();
    v.revokeKey(acme.issuer, 'acme-1');
    await expect(v.verify(await acme.token({}, undefined, { key: acmeSpare }))).resolves.toBeDefined();
  });

  test('a reload that still lists the key does not bring it back', async () => {
    const v = verifier();
    await v.verify(await acme.token());
    v.revokeKey(acme.issuer, 'acme-1');
    await v.refresh(acme.issuer);
    expect((await authRejection(v.verify(await acme.token()))).code).toBe('key_revoked');
  });

  test('revoking makes no download and reports the removal', async () => {
    const v = verifier();
    await v.verify(await acme.token());
    const before = acmeServer.requests;
    v.revokeKey(acme.issuer, 'acme-1');
    expect(acmeServer.requests).toBe(before);
    expect(log.events).toContainEqual({
      type: 'keys_removed',
      issuer: acme.issuer,
      kids: ['acme-1'],
      cause: 'revoked',
    });
  });

  test('a key can be revoked before it was ever downloaded', async () => {
    const v = verifier();
    v.revokeKey(acme.issuer, 'acme-1');
    expect((await authRejection(v.verify(await acme.token()))).code).toBe('key_revoked');
  });

  test.each([
    ['an unregistered issuer', 'https://nobody.test', 'acme-1'],
    ['an empty kid', 'https://acme.test', ''],
  ])('revoking with %s is a TypeError', (_name, issuer, kid) => {
    expect(() => verifier().revokeKey(issuer, kid)).toThrow(TypeError);
  });
});

describe('warmUp', () => {
  test("reports each issuer's outcome and never rejects when one endpoint is down", async () => {
    const v = verifier({ registry: [acme.entry, down, globex.entry] });
    const report = await v.warmUp();
    expect(report).toEqual([
      { issuer: acme.issuer, ok: true, keys: 2 },
      { issuer: down.issuer, ok: false, error: expect.any(String) },
      { issuer: globex.issuer, ok: true, keys: 1 },
    ]);
    expect(report[1]?.error).not.toContain(down.jwksUri);
  });

  test('after a warm-up the first verification makes no download', async () => {
    const v = verifier();
    await v.warmUp();
    const before = acmeServer.requests;
    await v.verify(await acme.token());
    expect(acmeServer.requests).toBe(before);
  });

  test('a second warm-up while the keys are fresh downloads nothing', async () => {
    const v = verifier();
    await v.warmUp();
    const before = acmeServer.requests + globexServer.requests;
    await expect(v.warmUp()).resolves.toMatchObject([{ ok: true }, { ok: true }]);
    expect(acmeServer.requests + globexServer.requests).toBe(before);
  });
});

describe('exportKeys and createVerifier({ keys })', () => {
  async function exported(): Promise<KeySnapshot> {
    const v = verifier();
    await v.warmUp();
    return v.exportKeys();
  }

  test('the snapshot is JSON-safe: it survives JSON.stringify and JSON.parse unchanged', async () => {
    const snapshot = await exported();
    expect(JSON.parse(JSON.stringify(snapshot))).toEqual(snapshot);
    expect(snapshot).toMatchObject({
      version: 1,
      issuers: [{ issuer: acme.issuer, jwksUri: acme.entry.jwksUri }, { issuer: globex.issuer }],
    });
  });

  test('the snapshot holds public key members only', async () => {
    const snapshot = await exported();
    const members = new Set(snapshot.issuers.flatMap((entry) => entry.keys.flatMap((jwk) => Object.keys(jwk))));
    expect([...members].sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
  });

  test('a verifier built from the snapshot starts warm: zero downloads', async () => {
    const snapshot = JSON.parse(JSON.stringify(await exported())) as KeySnapshot;
    const before = acmeServer.requests + globexServer.requests;
    const v = verifier({ keys: snapshot });
    await expect(v.verify(await acme.token())).resolves.toBeDefined();
    await expect(v.verify(await globex.token())).resolves.toBeDefined();
    expect(acmeServer.requests + globexServer.requests).toBe(before);
  });

  test("imported keys age from the snapshot's fetchedAt: past the max-age they are reloaded", async () => {
    const snapshot = await exported();
    clock.advance(600);
    const v = verifier({ keys: snapshot });
    const reloaded = log.nextFetch();
    await v.verify(await acme.token());
    expect(await reloaded).toMatchObject({ issuer: acme.issuer, trigger: 'max_age', outcome: 'ok' });
  });

  test('a snapshot older than max-age plus the stale window is not used: keys are downloaded', async () => {
    const snapshot = await exported();
    clock.advance(600 + 86_400);
    const v = verifier({ keys: snapshot });
    await v.verify(await acme.token());
    expect(log.fetches()).toMatchObject([{ issuer: acme.issuer, trigger: 'initial', outcome: 'ok' }]);
  });

  test('a fetchedAt in the future counts as now (a skewed snapshot cannot pin keys as fresh)', async () => {
    const snapshot = await exported();
    const skewed: KeySnapshot = {
      ...snapshot,
      issuers: snapshot.issuers.map((entry) => ({ ...entry, fetchedAt: clock.now() + 365 * 86_400_000 })),
    };
    const v = verifier({ keys: skewed });
    await v.verify(await acme.token());
    clock.advance(600);
    const reloaded = log.nextFetch();
    await v.verify(await acme.token());
    expect(await reloaded).toMatchObject({ trigger: 'max_age', outcome: 'ok' });
  });

  test('a revoked key is left out of the snapshot, and listed as revoked', async () => {
    const v = verifier();
    await v.warmUp();
    v.revokeKey(acme.issuer, 'acme-1');
    const entry = v.exportKeys().issuers.find((issuer) => issuer.issuer === acme.issuer);
    expect(entry?.keys.map((jwk) => jwk.kid)).toEqual(['acme-spare']);
    expect(entry?.revoked).toEqual(['acme-1']);
  });

  test('a verifier built from the snapshot keeps the revocation, though the JWKS still lists the key (a restart does not undo it)', async () => {
    const v = verifier();
    v.revokeKey(acme.issuer, 'acme-1');
    const snapshot = JSON.parse(JSON.stringify(v.exportKeys())) as KeySnapshot;
    const restarted = verifier({ keys: snapshot });
    expect((await authRejection(restarted.verify(await acme.token()))).code).toBe('key_revoked');
    await expect(restarted.verify(await acme.token({}, undefined, { key: acmeSpare }))).resolves.toBeDefined();
  });

  test('keys exported for another jwksUri are ignored', async () => {
    const snapshot = await exported();
    const moved = { ...acme.entry, jwksUri: `${acme.entry.jwksUri}#moved` };
    const v = verifier({ keys: snapshot, registry: [moved] });
    await v.verify(await acme.token());
    expect(log.fetches()).toMatchObject([{ trigger: 'initial' }]);
  });

  test('keys in the snapshot go through the key rules again', async () => {
    const snapshot = await exported();
    const tampered: KeySnapshot = {
      ...snapshot,
      issuers: snapshot.issuers.map((entry) => ({
        ...entry,
        keys: entry.keys.map((jwk) => ({ ...jwk, use: 'enc' as 'sig' })),
      })),
    };
    const v = verifier({ keys: tampered });
    await v.verify(await acme.token());
    expect(log.fetches()).toMatchObject([{ trigger: 'kid_miss', outcome: 'ok' }]);
  });

  test.each([
    ['not an object', 'snapshot', /keys must be a snapshot from exportKeys\(\)/],
    ['of another version', { version: 2, issuers: [] }, /keys\.version must be 1/],
    ['without issuers', { version: 1 }, /keys\.issuers must be an array/],
    [
      'with a bad fetchedAt',
      { version: 1, issuers: [{ issuer: 'x', jwksUri: 'y', fetchedAt: -1, keys: [] }] },
      /keys\.issuers\[0\]\.fetchedAt/,
    ],
    [
      'with revoked kids that are not strings',
      { version: 1, issuers: [{ issuer: 'x', jwksUri: 'y', fetchedAt: 0, keys: [], revoked: [7] }] },
      /keys\.issuers\[0\]\.revoked/,
    ],
  ])('a snapshot %s is refused with a TypeError naming the field', (_name, keys, message) => {
    expect(() => verifier({ keys: keys as unknown as KeySnapshot })).toThrow(message);
  });
});
