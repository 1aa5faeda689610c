import { describe, expect, test } from 'vitest';
import { type IssuerEntry, IssuerRegistry } from '../../src/index.js';
import { checkIssuerEntry, deriveRegistry } from '../../src/internal/index.js';

const entry: IssuerEntry = {
  issuer: 'https://auth.acme.example',
  jwksUri: 'https://auth.acme.example/jwks.json',
  products: ['acme'],
};

describe('IssuerRegistry', () => {
  test('looks issuers up by their exact iss', () => {
    const registry = new IssuerRegistry([entry]);
    expect(registry.get('https://auth.acme.example')?.products.has('acme')).toBe(true);
    expect(registry.get('https://auth.acme.example/')).toBeUndefined();
    expect(registry.has('https://AUTH.acme.example')).toBe(false);
  });

  test('lists issuers and entries in registration order', () => {
    const registry = new IssuerRegistry([entry, { ...entry, issuer: 'https://b.example' }]);
    expect(registry.issuers).toEqual(['https://auth.acme.example', 'https://b.example']);
    expect(registry.size).toBe(2);
    expect(registry.entries()[1]?.issuer).toBe('https://b.example');
  });

  test('keeps frozen copies: changing the given entry changes nothing', () => {
    const products = ['acme'];
    const registry = new IssuerRegistry([{ ...entry, products }]);
    products.push('beta');
    expect(registry.get(entry.issuer)?.products.has('beta')).toBe(false);
    expect(Object.isFrozen(registry.entries()[0])).toBe(true);
  });

  test("defaults: every tenant, the verifier's lifetime, sub must equal iss", () => {
    const registered = new IssuerRegistry([entry]).get(entry.issuer);
    expect(registered).toMatchObject({ tenants: null, maxTokenLifetime: undefined, subjectMustEqualIssuer: true });
  });

  test.each([
    ['http://127.0.0.1:8080/jwks.json'],
    ['http://localhost/jwks.json'],
    ['http://[::1]:9000/jwks.json'],
    ['http://127.8.9.10/jwks.json'],
  ])('allows http: on the loopback host %s', (jwksUri) => {
    expect(() => new IssuerRegistry([{ ...entry, jwksUri }])).not.toThrow();
  });

  test.each<[string, unknown, RegExp]>([
    ['no entries', [], /at least one issuer/],
    ['a non-array', 'x', /entries must be an array/],
    ['an entry that is not an object', [null], /entries\[0\] must be an object/],
    ['an empty issuer', [{ ...entry, issuer: '' }], /entries\[0\]\.issuer must be a non-empty string/],
    ['an issuer with surrounding space', [{ ...entry, issuer: ' https://a ' }], /entries\[0\]\.issuer/],
    ['a repeated issuer', [entry, entry], /entries\[1\]\.issuer repeats "https:\/\/auth\.acme\.example"/],
    ['an issuer that is a bare name, not a URI', [{ ...entry, issuer: 'acme' }], /entries\[0\]\.issuer must be an https: URI/],
    ['an http: issuer on a public host', [{ ...entry, issuer: 'http://auth.acme.example' }], /entries\[0\]\.issuer must be an https: URI/],
    ['an issuer with credentials', [{ ...entry, issuer: 'https://u:p@auth.acme.example' }], /entries\[0\]\.issuer must be an https: URI/],
    [
      'an http: JWKS on a public host (attack: keys fetched in clear text)',
      [{ ...entry, jwksUri: 'http://auth.acme.example/jwks.json' }],
      /jwksUri must use https:/,
    ],
    ['a JWKS URL on 127.0.0.1.evil.test', [{ ...entry, jwksUri: 'http://127.0.0.1.evil.test/jwks.json' }], /jwksUri must use https:/],
    ['a file: JWKS URL', [{ ...entry, jwksUri: 'file:///etc/jwks.json' }], /jwksUri must use https:/],
    ['a relative JWKS URL', [{ ...entry, jwksUri: '/jwks.json' }], /jwksUri is not an absolute URL/],
    ['a JWKS URL with credentials', [{ ...entry, jwksUri: 'https://u:p@auth.acme.example/jwks.json' }], /must not carry credentials/],
    ['no products', [{ ...entry, products: [] }], /products must be a non-empty array/],
    ['a product that is not a name', [{ ...entry, products: ['ac me'] }], /products\[0\] must be a name/],
    ['a repeated product', [{ ...entry, products: ['a', 'a'] }], /products\[1\] repeats "a"/],
    ['an empty tenants list', [{ ...entry, tenants: [] }], /tenants must be a non-empty array/],
    ['a tenant id with a slash', [{ ...entry, tenants: ['t/1'] }], /tenants\[0\] must be a name/],
    ['a zero lifetime', [{ ...entry, maxTokenLifetime: 0 }], /maxTokenLifetime must be a number of seconds above 0/],
    ['a lifetime over 7 days', [{ ...entry, maxTokenLifetime: 8 * 86_400 }], /maxTokenLifetime/],
    ['a lifetime that is not a number', [{ ...entry, maxTokenLifetime: '3600' }], /maxTokenLifetime/],
    ['a non-boolean subject switch', [{ ...entry, subjectMustEqualIssuer: 'no' }], /subjectMustEqualIssuer must be a boolean/],
    ['a misspelt field', [{ ...entry, jwks_uri: 'x' }], /jwks_uri is not an entry field/],
  ])('rejects %s, naming the entry and the field', (_name, entries, message) => {
    expect(() => new IssuerRegistry(entries as IssuerEntry[])).toThrow(message);
  });

  test('quotes an unknown field name as one escaped line, cut (attack: a table row whose field name forges lines)', () => {
    const name = `x\n\u001b[2Jall done${'y'.repeat(500)}`;
    let message = '';
    try {
      new IssuerRegistry([{ ...entry, [name]: 1 }] as IssuerEntry[]);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('["x\\u000a\\u001b[2Jall done');
    expect(message).toContain('is not an entry field');
    expect(message).not.toMatch(/[\n\u001b]/);
    expect(message.length).toBeLessThan(300);
  });

  test.each<[string, Partial<Record<keyof IssuerEntry, unknown>> | null, string]>([
    ['an entry that is not an object', null, 'entries[0] must be an object, got null'],
    [
      'an issuer that is not a string',
      { issuer: 42 },
      'entries[0].issuer must be a non-empty string without surrounding white space, got 42',
    ],
    [
      'an http: issuer',
      { issuer: 'http://auth.acme.example' },
      '.issuer must be an https: URI without credentials (http: only on a loopback host), got "http://auth.acme.example"',
    ],
    ['a relative JWKS URL', { jwksUri: '/jwks.json' }, '.jwksUri is not an absolute URL, got "/jwks.json"'],
    [
      'an http: JWKS URL',
      { jwksUri: 'http://auth.acme.example/jwks.json' },
      '.jwksUri must use https: (http: is allowed only for loopback hosts), got "http://auth.acme.example/jwks.json"',
    ],
    [
      'a product that is not a name',
      { products: ['ac me'] },
      '.products[0] must be a name of letters, digits, "-", "_" and ".", got "ac me"',
    ],
    ['products that are not a list', { products: 'acme' }, '.products must be a non-empty array of names, got "acme"'],
    [
      'a lifetime over 7 days',
      { maxTokenLifetime: 8 * 86_400 },
      '.maxTokenLifetime must be a number of seconds above 0 and at most 604800, got 691200',
    ],
    [
      'a lifetime that is text',
      { maxTokenLifetime: '3600' },
      '.maxTokenLifetime must be a number of seconds above 0 and at most 604800, got "3600"',
    ],
    ['a non-boolean subject switch', { subjectMustEqualIssuer: 'no' }, '.subjectMustEqualIssuer must be a boolean, got "no"'],
  ])('rejects %s naming the value found', (_name, fields, message) => {
    const given = fields === null ? null : { ...entry, ...fields };
    expect(() => new IssuerRegistry([given as IssuerEntry])).toThrow(message);
  });

  test.each([
    ['issuer', { issuer: 'https://user:secret@auth.acme.example' }],
    ['jwksUri', { jwksUri: 'https://user:secret@auth.acme.example/jwks.json' }],
  ])('never quotes the credentials of a refused %s', (_field, fields) => {
    let message = '';
    try {
      new IssuerRegistry([{ ...entry, ...fields }]);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('credentials');
    expect(message).not.toContain('secret');
  });

  test('takes an entry maxTokenLifetime of exactly 7 days and refuses one second more, naming the value found', () => {
    expect(new IssuerRegistry([{ ...entry, maxTokenLifetime: 604_800 }]).get(entry.issuer)?.maxTokenLifetime).toBe(604_800);
    expect(() => new IssuerRegistry([{ ...entry, maxTokenLifetime: 604_801 }])).toThrow(/maxTokenLifetime must be .*got 604801/);
  });

  test('accepts an http: issuer on a loopback host only (tests, examples)', () => {
    expect(new IssuerRegistry([{ ...entry, issuer: 'http://127.0.0.1:9999' }]).issuers).toEqual(['http://127.0.0.1:9999']);
  });

  test('names the entry by its issuer in field errors', () => {
    expect(() => new IssuerRegistry([{ ...entry, products: [] }])).toThrow('entries[0] ("https://auth.acme.example").products');
  });
});

describe('deriveRegistry (a registry kept elsewhere, a few rows changed at a time)', () => {
  const acme: IssuerEntry = { issuer: 'https://acme.test', jwksUri: 'https://acme.test/jwks.json', products: ['acme'] };
  const beta: IssuerEntry = { issuer: 'https://beta.test', jwksUri: 'https://beta.test/jwks.json', products: ['beta'] };
  const gamma: IssuerEntry = { issuer: 'https://gamma.test', jwksUri: 'https://gamma.test/jwks.json', products: ['gamma'] };
  const checked = (entry: IssuerEntry) => checkIssuerEntry(entry, 'row');

  test('puts in, replaces and takes out only what is given, and reports it as changesTo does', () => {
    const base = new IssuerRegistry([acme, beta]);
    const derived = deriveRegistry(base, [checked({ ...beta, products: ['beta', 'more'] }), checked(gamma)], [acme.issuer]);
    expect(derived.issuers).toEqual([beta.issuer, gamma.issuer]);
    const change = { added: [gamma.issuer], updated: [beta.issuer], removed: [acme.issuer] };
    expect(base.changesTo(derived)).toEqual(change);
    expect(base.changesTo(new IssuerRegistry([{ ...beta, products: ['beta', 'more'] }, gamma]))).toEqual(change);
  });

  test('reports no change for an entry replaced by one with the same rules', () => {
    const base = new IssuerRegistry([acme]);
    expect(base.changesTo(deriveRegistry(base, [checked(acme)], []))).toEqual({ added: [], updated: [], removed: [] });
  });

  test('after many changes, holds and orders its issuers as a registry built from the same map', () => {
    // A map kept beside it, changed the same way: a replaced issuer keeps its place, one added
    // (or removed and added again) goes last; past the changes it folds into a new map, too.
    const named = (index: number, product = 'p'): IssuerEntry => ({
      issuer: `https://i${index}.test`,
      jwksUri: `https://i${index}.test/jwks.json`,
      products: [product],
    });
    const model = new Map<string, IssuerEntry>(Array.from({ length: 40 }, (_, index) => [named(index).issuer, named(index)]));
    let registry = new IssuerRegistry([...model.values()]);
    let seed = 7;
    const next = (below: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % below;
    };
    for (let step = 0; step < 300; step++) {
      const removals = Array.from({ length: next(3) }, () => named(next(60)).issuer);
      const upserts = Array.from({ length: next(3) }, () => named(next(60), `p${step}`));
      const before = registry;
      registry = deriveRegistry(registry, upserts.map(checked), removals);
      for (const issuer of removals) model.delete(issuer);
      for (const upsert of upserts) model.set(upsert.issuer, upsert);
      expect(registry.entries()).toEqual([...model.values()]);
      expect(registry.size).toBe(model.size);
      expect(registry.get(named(next(60)).issuer)?.entry).toEqual(model.get(named(seed % 60).issuer));
      const sorted = ({ added, updated, removed }: ReturnType<IssuerRegistry['changesTo']>) =>
        [added, updated, removed].map((names) => [...names].sort());
      expect(sorted(before.changesTo(registry))).toEqual(sorted(before.changesTo(new IssuerRegistry([...model.values()]))));
    }
  });

  test('refuses an issuer that checkIssuerEntry did not check (nothing would check it)', () => {
    const forged = { ...checked(acme), issuer: 'https://forged.test' };
    expect(() => deriveRegistry(new IssuerRegistry([acme]), [forged], [])).toThrow(TypeError);
  });
});
