/**
 * `setRegistry()`: the trusted issuers changed while the verifier runs. An issuer added verifies
 * at once; a changed entry applies to the next verification and to those in flight; a new
 * `jwksUri` drops the old keys; an issuer removed loses its keys and cached results, and its
 * verifications in flight fail.
 */
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { IssuerRegistry } from '../../src/index.js';
import { type TestIssuer, createTestIssuer } from '../../src/testing/index.js';
import { rejection } from '../support/fixture.js';
import { verifierFixture } from '../support/verifier-fixture.js';

const AUDIENCE = 'https://payments.test';

let acme: TestIssuer;
let beta: TestIssuer;

beforeEach(async () => {
  acme = await createTestIssuer({ product: 'acme', audience: AUDIENCE });
  beta = await createTestIssuer({ product: 'beta', issuer: 'https://beta.test', audience: AUDIENCE });
  await Promise.all([acme.listen(), beta.listen()]);
});

afterEach(() => Promise.all([acme.close(), beta.close()]));

const { verifier, log } = verifierFixture(() => ({ registry: [acme.entry], audience: AUDIENCE, cacheAdmission: 'first-use' }));

const tenantToken = (issuer: TestIssuer, tenant: string): Promise<string> =>
  issuer.token({ tenant_ern: `ern:${issuer.product}/tenants/${tenant}` });

describe('adding an issuer', () => {
  test('an issuer added verifies its tokens at once, with no restart', async () => {
    const gateway = verifier();
    const token = await beta.token();
    expect((await rejection(gateway.verify(token))).code).toBe('unknown_issuer');
    gateway.setRegistry([acme.entry, beta.entry]);
    expect((await gateway.verify(token)).issuer).toBe(beta.issuer);
  });

  test('the change is returned and reported as a registry_changed event', () => {
    const gateway = verifier();
    const change = gateway.setRegistry([acme.entry, beta.entry]);
    expect(change).toEqual({ added: [beta.issuer], updated: [], removed: [] });
    expect(log.events.filter((event) => event.type === 'registry_changed')).toEqual([
      { type: 'registry_changed', added: [beta.issuer], updated: [], removed: [], issuers: 2 },
    ]);
  });

  test('the same registry again changes nothing and reports nothing', () => {
    const gateway = verifier();
    expect(gateway.setRegistry([{ ...acme.entry }])).toEqual({ added: [], updated: [], removed: [] });
    expect(log.events.filter((event) => event.type === 'registry_changed')).toEqual([]);
  });

  test('the registry property is the new registry', () => {
    const gateway = verifier();
    const next = new IssuerRegistry([acme.entry, beta.entry]);
    gateway.setRegistry(next);
    expect(gateway.registry).toBe(next);
  });
});

describe('changing an entry', () => {
  test('a tenant added to a limited integration is accepted at the next verification', async () => {
    const gateway = verifier({ registry: [{ ...acme.entry, tenants: ['t-1'] }] });
    const token = await tenantToken(acme, 't-2');
    expect((await rejection(gateway.verify(token))).code).toBe('tenant_not_allowed');
    gateway.setRegistry([{ ...acme.entry, tenants: ['t-1', 't-2'] }]);
    expect((await gateway.verify(token)).tenant.id).toBe('t-2');
  });

  test('a tenant taken out is refused at once, its cached results included', async () => {
    const gateway = verifier({ registry: [{ ...acme.entry, tenants: ['t-1', 't-2'] }] });
    const token = await tenantToken(acme, 't-2');
    await gateway.verify(token);
    await gateway.verify(token);
    gateway.setRegistry([{ ...acme.entry, tenants: ['t-1'] }]);
    expect((await rejection(gateway.verify(token))).code).toBe('tenant_not_allowed');
  });

  test('a verification in flight is checked against the entry as it is when its signature is done', async () => {
    const gateway = verifier({ registry: [{ ...acme.entry, tenants: ['t-1', 't-2'] }] });
    const token = await tenantToken(acme, 't-2');
    const inFlight = gateway.verify(token); // waits for the first JWKS download
    gateway.setRegistry([{ ...acme.entry, tenants: ['t-1'] }]);
    expect((await rejection(inFlight)).code).toBe('tenant_not_allowed');
  });

  test('a cached result re-checked while its key reloads is checked against the entry as it is after the wait', async () => {
    // jwksMaxAge 0: every hit finds its key past its max-age, and waits for the key before it is reused.
    const gateway = verifier({ registry: [{ ...acme.entry, tenants: ['t-1', 't-2'] }], jwksMaxAge: 0 });
    const token = await tenantToken(acme, 't-2');
    await gateway.verify(token);
    const inFlight = gateway.verify(token);
    gateway.setRegistry([{ ...acme.entry, tenants: ['t-1'] }]);
    expect((await rejection(inFlight)).code).toBe('tenant_not_allowed');
  });

  test('a new jwksUri drops the old keys at once: tokens of the old keys stop verifying', async () => {
    const gateway = verifier();
    const old = await acme.token();
    await gateway.verify(old);
    // The integration moved its JWKS; the new endpoint serves another key.
    const moved = await createTestIssuer({ product: 'acme', issuer: acme.issuer, audience: AUDIENCE, kid: 'moved-1' });
    await moved.listen();
    try {
      gateway.setRegistry([{ ...acme.entry, jwksUri: moved.jwksUri }]);
      expect(log.events).toContainEqual({
        type: 'keys_removed',
        issuer: acme.issuer,
        kids: [acme.signingKey.kid],
        cause: 'issuer_changed',
      });
      expect((await rejection(gateway.verify(old))).code).toBe('unknown_key');
      expect((await gateway.verify(await moved.token())).issuer).toBe(acme.issuer);
    } finally {
      await moved.close();
    }
  });

  test('a download in flight from the old jwksUri installs nothing', async () => {
    const gateway = verifier();
    const downloading = gateway.warmUp();
    const moved = await createTestIssuer({ product: 'acme', issuer: acme.issuer, audience: AUDIENCE, kid: 'moved-1' });
    await moved.listen();
    try {
      gateway.setRegistry([{ ...acme.entry, jwksUri: moved.jwksUri }]);
      await downloading;
      expect((await rejection(gateway.verify(await acme.token()))).code).toBe('unknown_key');
      expect(gateway.exportKeys().issuers.flatMap((held) => held.keys.map((key) => key.kid))).toEqual(['moved-1']);
    } finally {
      await moved.close();
    }
  });

  test('refresh() in flight when the jwksUri moves loads the keys of the new one and reports them', async () => {
    const gateway = verifier();
    const moved = await createTestIssuer({ product: 'acme', issuer: acme.issuer, audience: AUDIENCE, kid: 'moved-1' });
    await moved.listen();
    try {
      const refreshing = gateway.refresh(acme.issuer);
      gateway.setRegistry([{ ...acme.entry, jwksUri: moved.jwksUri }]);
      expect(await refreshing).toEqual({ issuer: acme.issuer, ok: true, keys: 1 });
      expect(gateway.exportKeys().issuers.flatMap((held) => held.keys.map((key) => key.kid))).toEqual(['moved-1']);
    } finally {
      await moved.close();
    }
  });

  test('warmUp() in flight when the jwksUri moves loads the keys of the new one and reports them', async () => {
    const gateway = verifier();
    const moved = await createTestIssuer({ product: 'acme', issuer: acme.issuer, audience: AUDIENCE, kid: 'moved-1' });
    await moved.listen();
    try {
      const warming = gateway.warmUp();
      gateway.setRegistry([{ ...acme.entry, jwksUri: moved.jwksUri }]);
      expect(await warming).toEqual([{ issuer: acme.issuer, ok: true, keys: 1 }]);
      expect(gateway.exportKeys().issuers.flatMap((held) => held.keys.map((key) => key.kid))).toEqual(['moved-1']);
    } finally {
      await moved.close();
    }
  });

  test('the same jwksUri keeps the held keys: no download is needed', async () => {
    const gateway = verifier();
    await gateway.verify(await acme.token());
    const downloads = acme.jwksRequests;
    gateway.setRegistry([{ ...acme.entry, maxTokenLifetime: 3600 }]);
    await gateway.verify(await acme.token());
    expect(acme.jwksRequests).toBe(downloads);
  });

  test('a revocation outlives a change of jwksUri', async () => {
    const gateway = verifier();
    gateway.revokeKey(acme.issuer, acme.signingKey.kid);
    gateway.setRegistry([{ ...acme.entry, jwksUri: `${acme.jwksUri}?moved` }]);
    expect((await rejection(gateway.verify(await acme.token()))).code).toBe('key_revoked');
  });
});

describe('removing an issuer', () => {
  test('its tokens are refused at once, cached results included', async () => {
    const gateway = verifier({ registry: [acme.entry, beta.entry] });
    const token = await beta.token();
    await gateway.verify(token);
    await gateway.verify(token);
    gateway.setRegistry([acme.entry]);
    expect((await rejection(gateway.verify(token))).code).toBe('unknown_issuer');
    expect(log.events).toContainEqual({ type: 'keys_removed', issuer: beta.issuer, kids: [beta.signingKey.kid], cause: 'issuer_removed' });
  });

  test('a verification in flight for it fails', async () => {
    const gateway = verifier({ registry: [acme.entry, beta.entry] });
    const inFlight = gateway.verify(await beta.token()); // waits for the first JWKS download
    gateway.setRegistry([acme.entry]);
    const error = await rejection(inFlight);
    expect(error.code).toBe('unknown_issuer');
    expect(error.facts).toMatchObject({ rule: 'iss', actual: beta.issuer, expected: [acme.issuer] });
  });

  test('refresh() in flight for it rejects, naming the issuer removed', async () => {
    const gateway = verifier();
    const refreshing = gateway.refresh(acme.issuer);
    gateway.setRegistry([beta.entry]);
    const error = await refreshing.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toContain(`"${acme.issuer}" was removed`);
  });

  test('its keys leave exportKeys() and other issuers keep theirs', async () => {
    const gateway = verifier({ registry: [acme.entry, beta.entry] });
    await gateway.warmUp();
    gateway.setRegistry([acme.entry]);
    expect(gateway.exportKeys().issuers.map((held) => held.issuer)).toEqual([acme.issuer]);
    expect((await gateway.verify(await acme.token())).issuer).toBe(acme.issuer);
  });

  test('every issuer may be removed; then no token verifies', async () => {
    const gateway = verifier();
    gateway.setRegistry([]);
    expect(gateway.registry.size).toBe(0);
    expect((await rejection(gateway.verify(await acme.token()))).code).toBe('unknown_issuer');
  });

  test('a suspension outlives the removal and still applies when the issuer comes back', async () => {
    const gateway = verifier({ registry: [acme.entry, beta.entry] });
    gateway.suspendIssuer(beta.issuer);
    gateway.setRegistry([acme.entry]);
    gateway.setRegistry([acme.entry, beta.entry]);
    expect((await rejection(gateway.verify(await beta.token()))).code).toBe('issuer_suspended');
    gateway.resumeIssuer(beta.issuer);
    expect((await gateway.verify(await beta.token())).issuer).toBe(beta.issuer);
  });

  test('a revocation outlives the removal and still applies when the issuer comes back', async () => {
    const gateway = verifier({ registry: [acme.entry, beta.entry] });
    gateway.revokeKey(beta.issuer, beta.signingKey.kid);
    gateway.setRegistry([acme.entry]);
    gateway.setRegistry([acme.entry, beta.entry]);
    expect((await rejection(gateway.verify(await beta.token()))).code).toBe('key_revoked');
  });

  test('reports a suspension and its lifting once each, as issuer_suspended and issuer_resumed', () => {
    const gateway = verifier({ registry: [acme.entry, beta.entry] });
    gateway.suspendIssuer(beta.issuer);
    gateway.suspendIssuer(beta.issuer);
    gateway.resumeIssuer(beta.issuer);
    gateway.resumeIssuer(acme.issuer);
    const reported = log.events.filter((event) => event.type === 'issuer_suspended' || event.type === 'issuer_resumed');
    expect(reported).toEqual([
      { type: 'issuer_suspended', issuer: beta.issuer },
      { type: 'issuer_resumed', issuer: beta.issuer },
    ]);
  });

  test('a suspension may be lifted while the issuer is removed', () => {
    const gateway = verifier({ registry: [acme.entry, beta.entry] });
    gateway.suspendIssuer(beta.issuer);
    gateway.setRegistry([acme.entry]);
    expect(() => gateway.resumeIssuer(beta.issuer)).not.toThrow();
    expect(() => gateway.resumeIssuer(beta.issuer)).toThrow(TypeError);
  });
});

describe('a bad registry', () => {
  test('a bad entry throws a TypeError naming it, and nothing changes', async () => {
    const gateway = verifier();
    expect(() => gateway.setRegistry([acme.entry, { ...beta.entry, jwksUri: 'ftp://beta.test/jwks' }])).toThrow(/entries\[1\].*jwksUri/);
    expect(gateway.registry.issuers).toEqual([acme.issuer]);
    expect((await rejection(gateway.verify(await beta.token()))).code).toBe('unknown_issuer');
  });

  test('a registry written in code still needs one issuer', () => {
    expect(() => new IssuerRegistry([])).toThrow(/at least one issuer/);
    expect(new IssuerRegistry([], { allowEmpty: true }).size).toBe(0);
  });
});

describe('tokens naming an unregistered issuer', () => {
  test('cost no copy of the registry each (anyone can send them): its issuers are listed once', async () => {
    const registry = new IssuerRegistry([acme.entry]);
    const listed = vi.spyOn(registry, 'issuers', 'get');
    const gateway = verifier({ registry });
    for (const iss of ['https://evil.test', 'https://evil2.test', 'https://evil3.test']) {
      const error = await rejection(gateway.verify(await acme.token({ iss, sub: iss })));
      expect(error.facts).toMatchObject({ expected: [acme.issuer] });
    }
    expect(listed.mock.calls.length).toBeLessThanOrEqual(1);
  });

  test('are told the issuers of the registry in force, after a change too', async () => {
    const gateway = verifier();
    const token = await acme.token({ iss: 'https://evil.test', sub: 'https://evil.test' });
    expect((await rejection(gateway.verify(token))).facts).toMatchObject({ expected: [acme.issuer] });
    gateway.setRegistry([acme.entry, beta.entry]);
    expect((await rejection(gateway.verify(token))).facts).toMatchObject({ expected: [acme.issuer, beta.issuer] });
  });
});

describe('operator methods named an issuer that is not registered', () => {
  test('quote it escaped for one log line', () => {
    const gateway = verifier();
    expect(() => gateway.revokeKey('https://evil.test\u202e', 'k')).toThrow('"https://evil.test\\u202e" is not a registered issuer');
  });

  test('name a value that is no string', () => {
    const gateway = verifier();
    expect(() => gateway.suspendIssuer(42 as unknown as string)).toThrow('suspendIssuer: a number is not a registered issuer');
  });
});

describe('revokeKey named a kid that is no kid', () => {
  test.each([
    ['an empty string', '', 'got ""'],
    ['a number', 7, 'got 7'],
  ])('names %s as the value found', (_case, kid, found) => {
    const gateway = verifier();
    expect(() => gateway.revokeKey(acme.issuer, kid as string)).toThrow(found);
  });
});
