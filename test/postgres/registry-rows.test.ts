/**
 * Each row of the registry table judged on its own, with the registry's own entry rules: a bad
 * row is left out and named with its rule, the issuers it names are refused, the others apply.
 */
import { describe, expect, it } from 'vitest';
import type { IssuerEntry } from '../../src/index.js';
import { RegistryRows, checkRegistryRows } from '../../src/postgres/registry-rows.js';

const ACME: IssuerEntry = { issuer: 'https://acme.test', jwksUri: 'https://acme.test/jwks.json', products: ['acme'] };
const BETA: IssuerEntry = { issuer: 'https://beta.test', jwksUri: 'https://beta.test/jwks.json', products: ['beta'] };

const row = (entry: unknown, issuer = (entry as IssuerEntry).issuer) => ({ issuer, entry });

describe('checkRegistryRows', () => {
  it('applies every row when none is refused', () => {
    const { registry, refused } = checkRegistryRows([row(ACME), row(BETA)]);
    expect(registry.issuers).toEqual([ACME.issuer, BETA.issuer]);
    expect(refused).toEqual([]);
  });

  it.each([
    ['an http: issuer off loopback', { ...ACME, issuer: 'http://acme.test' }, /\.issuer must be an https: URI/],
    ['an unknown field (written by a newer version)', { ...ACME, audience: 'x' }, /\.audience is not an entry field/],
    ['no products', { ...ACME, products: [] }, /\.products must be a non-empty array/],
    ['an entry that is not an object', ['https://acme.test'], /must be an object/],
  ])('leaves out a row with %s, naming the field, and applies the others', (_case, entry, reason) => {
    const { registry, refused } = checkRegistryRows([row(entry, ACME.issuer), row(BETA)]);
    expect(registry.issuers).toEqual([BETA.issuer]);
    expect(refused).toEqual([{ row: ACME.issuer, rule: 'invalid_entry', reason: expect.stringMatching(reason) }]);
  });

  it("refuses a decoy key holding another issuer's entry, and that issuer's own row with it (fail closed)", () => {
    const { registry, refused } = checkRegistryRows([row(ACME), row(BETA), row(ACME, 'decoy')]);
    expect(registry.issuers).toEqual([BETA.issuer]);
    expect(refused).toEqual([
      { row: 'decoy', rule: 'key_mismatch', reason: expect.stringContaining('holds the entry of issuer "https://acme.test"') },
      { row: ACME.issuer, rule: 'repeated_issuer', reason: expect.stringContaining('another row ("decoy") names issuer') },
    ]);
  });

  it('refuses an issuer that a refused row names in its entry, even one whose own row is good', () => {
    const { registry, refused } = checkRegistryRows([row(ACME), row({ ...ACME, products: [] }, 'other')]);
    expect(registry.size).toBe(0);
    expect(refused.map(({ row: key, rule }) => [key, rule])).toEqual([
      ['other', 'invalid_entry'],
      [ACME.issuer, 'repeated_issuer'],
    ]);
  });

  it('leaves out a row whose issuer is longer than 2048 characters (written before the table held it), naming its length', () => {
    const issuer = `https://acme.test/${'a'.repeat(3000 - 18)}`;
    const { registry, refused } = checkRegistryRows([row({ ...ACME, issuer }), row(BETA)]);
    expect(registry.issuers).toEqual([BETA.issuer]);
    expect(refused).toEqual([
      { row: issuer, rule: 'invalid_entry', reason: expect.stringMatching(/at most 2048 characters .*got 3000 characters/) },
    ]);
  });

  it('names a hostile key cut and escaped on one line', () => {
    const hostile = `https://x.test/\n\u202eINFO forged ${'a'.repeat(5000)}`;
    const [refusal] = checkRegistryRows([row(ACME, hostile)]).refused;
    expect(refusal?.row).toBe(hostile);
    expect(refusal?.reason).not.toMatch(/[\n\u202e]/);
    expect(refusal?.reason.length).toBeLessThanOrEqual(1000);
  });
});

describe('RegistryRows, judging a change by the rows it touches', () => {
  it('refuses an issuer once a decoy naming it arrives, and applies it again once the decoy goes', () => {
    const rows = new RegistryRows();
    rows.apply([row(ACME), row(BETA)]);
    const collided = rows.apply([row(ACME, 'decoy')]);
    expect(collided.change).toEqual({ added: [], updated: [], removed: [ACME.issuer] });
    expect(collided.judged.map(({ row: key, rule }) => [key, rule])).toEqual([
      ['decoy', 'key_mismatch'],
      [ACME.issuer, 'repeated_issuer'],
    ]);
    const restored = rows.apply([], ['decoy']);
    expect(restored.change).toEqual({ added: [ACME.issuer], updated: [], removed: [] });
    expect(restored.refused).toEqual([]);
    expect([...rows.registry.issuers].sort()).toEqual([ACME.issuer, BETA.issuer]);
  });

  it('refuses an issuer once a bad row naming it is fixed into a second row of that issuer, and not before', () => {
    const rows = new RegistryRows();
    rows.apply([row(ACME), row({ ...BETA, products: [] })]);
    expect(rows.registry.issuers).toEqual([ACME.issuer]);
    // The bad beta row now names acme (still bad): acme's own row collides with it.
    const named = rows.apply([row({ ...ACME, products: [] }, BETA.issuer)]);
    expect(named.change.removed).toEqual([ACME.issuer]);
    // Fixed into beta's own entry: it names beta alone, so acme applies again, and beta with it.
    const fixed = rows.apply([row(BETA)]);
    expect([...fixed.change.added].sort()).toEqual([ACME.issuer, BETA.issuer]);
    expect([fixed.change.updated, fixed.change.removed]).toEqual([[], []]);
    expect(fixed.refused).toEqual([]);
  });

  it('holds the same registry and refusals as the rows checked at once, after any sequence of changes', () => {
    const rows = new RegistryRows();
    rows.apply([row(ACME), row(BETA, 'decoy')]);
    rows.apply([row(BETA)], ['decoy']);
    rows.apply([row({ ...ACME, products: ['acme', 'more'] })]);
    const once = checkRegistryRows([row({ ...ACME, products: ['acme', 'more'] }), row(BETA)]);
    expect(rows.registry.entries()).toEqual(expect.arrayContaining([...once.registry.entries()]));
    expect(rows.registry.size).toBe(once.registry.size);
    expect(rows.refused).toEqual(once.refused);
  });
});
