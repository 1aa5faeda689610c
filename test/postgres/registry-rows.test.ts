/**
 * Each row of the registry table judged on its own, with the registry's own entry rules: a bad
 * row is left out and named with its rule, the issuers it names are refused, the others apply.
 */
import { describe, expect, it } from 'vitest';
import type { IssuerEntry } from '../../src/index.js';
import { checkRegistryRows } from '../../src/postgres/registry-rows.js';

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

  it('names a hostile key cut and escaped on one line', () => {
    const hostile = `https://x.test/\n\u202eINFO forged ${'a'.repeat(5000)}`;
    const [refusal] = checkRegistryRows([row(ACME, hostile)]).refused;
    expect(refusal?.row).toBe(hostile);
    expect(refusal?.reason).not.toMatch(/[\n\u202e]/);
    expect(refusal?.reason.length).toBeLessThanOrEqual(1000);
  });
});
