import { describe, expect, test } from 'vitest';
import { StringLookup } from '../../src/core/string-lookup.js';

/** `text` as a new string object, as `JSON.parse` hands over each token's values. */
function fresh(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}

const LIMITS = { maxEntries: 3, maxKeyChars: 10 };

describe('StringLookup', () => {
  test('finds the value of a key given at construction', () => {
    const lookup = new StringLookup([['https://a.example', 1], ['https://b.example', 2]]);
    expect(lookup.get(fresh('https://b.example'))).toBe(2);
  });

  test('answers undefined for a key it does not hold', () => {
    const lookup = new StringLookup([['https://a.example', 1]]);
    expect(lookup.get('https://c.example')).toBeUndefined();
  });

  test('answers each key with its own value when keys alternate (the last hit never answers another key)', () => {
    const lookup = new StringLookup([['aud-1', 'first'], ['aud-2', 'second']]);
    const answers = ['aud-1', 'aud-2', 'aud-2', 'aud-1', 'aud-3', 'aud-1'].map((key) => lookup.get(fresh(key)));
    expect(answers).toEqual(['first', 'second', 'second', 'first', undefined, 'first']);
  });

  test('does not answer a key that only shares a prefix, or differs in case, with the last hit', () => {
    const lookup = new StringLookup([['ern:acme/tenants/t-1', 'tenant']]);
    lookup.get('ern:acme/tenants/t-1');
    expect([lookup.get('ern:acme/tenants/t-10'), lookup.get('ern:acme/tenants/t-'), lookup.get('ERN:acme/tenants/t-1')]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });

  test('finds a value it was given with set', () => {
    const lookup = new StringLookup<number>([], LIMITS);
    lookup.set('scope-a', 1);
    expect(lookup.get(fresh('scope-a'))).toBe(1);
  });

  test('a set replaces the value of a key it already holds, last hit included', () => {
    const lookup = new StringLookup<number>([], LIMITS);
    lookup.set('scope-a', 1);
    lookup.get('scope-a');
    lookup.set('scope-a', 2);
    expect(lookup.get(fresh('scope-a'))).toBe(2);
  });

  test('starts afresh when a set finds it full', () => {
    const lookup = new StringLookup<number>([], LIMITS);
    for (const [index, key] of ['a', 'b', 'c', 'd'].entries()) lookup.set(key, index);
    expect({ size: lookup.size, a: lookup.get(fresh('a')), d: lookup.get(fresh('d')) }).toEqual({ size: 1, a: undefined, d: 3 });
  });

  test('ignores a set whose key is longer than its limit', () => {
    const lookup = new StringLookup<number>([], LIMITS);
    lookup.set('x'.repeat(11), 1);
    expect({ size: lookup.size, value: lookup.get('x'.repeat(11)) }).toEqual({ size: 0, value: undefined });
  });

  test('remembers a key exactly at its length limit', () => {
    const lookup = new StringLookup<number>([], LIMITS);
    lookup.set('x'.repeat(10), 1);
    expect(lookup.get(fresh('x'.repeat(10)))).toBe(1);
  });

  test('refuses a set when built without limits (its entries are fixed)', () => {
    const lookup = new StringLookup([['aud', 'aud']]);
    expect(() => lookup.set('other', 'other')).toThrow(TypeError);
  });
});
