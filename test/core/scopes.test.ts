import { describe, expect, test } from 'vitest';
import { KNOWN_SCOPES, SCOPES, ScopeError, ScopeSet, hasScopes, isKnownScope, parseScopes } from '../../src/index.js';

describe('SCOPES', () => {
  test('names the four scopes of the contract', () => {
    expect(KNOWN_SCOPES).toEqual(['pay:processPayments', 'pay:chargeToken', 'pay:manageIntegration', 'hub:subscribe']);
    expect(SCOPES.processPayments).toBe('pay:processPayments');
  });

  test('isKnownScope tells known scopes from others', () => {
    expect(isKnownScope('hub:subscribe')).toBe(true);
    expect(isKnownScope('hub:publish')).toBe(false);
  });
});

describe('parseScopes', () => {
  test('splits a space-delimited list into a set', () => {
    expect([...parseScopes('pay:processPayments hub:subscribe')]).toEqual(['pay:processPayments', 'hub:subscribe']);
  });

  test('an empty string is no scopes', () => {
    expect(parseScopes('').size).toBe(0);
  });

  test('keeps unknown scopes', () => {
    expect(parseScopes('custom:x').has('custom:x')).toBe(true);
  });

  test.each([
    ['a leading space', ' pay:processPayments'],
    ['a doubled space', 'a  b'],
    ['a tab', 'a\tb'],
    ['a double quote', 'a"b'],
    ['a backslash', 'a\\b'],
    ['a non-ASCII character', 'caf\u00e9'],
  ])('rejects %s', (_name, value) => {
    expect(() => parseScopes(value)).toThrow(ScopeError);
  });

  test('rejects a value that is not a string', () => {
    expect(() => parseScopes(['a'])).toThrow(ScopeError);
  });

  /** The message `parseScopes(value)` throws. */
  function refusal(value: unknown): string {
    try {
      parseScopes(value);
    } catch (error) {
      expect(error).toBeInstanceOf(ScopeError);
      return (error as ScopeError).message;
    }
    throw new Error('parseScopes accepted the value');
  }

  test('a refused list names the value found and the scope at fault', () => {
    const message = refusal('pay:processPayments caf\u00e9');
    expect(message).toContain('got "pay:processPayments caf\u00e9"');
    expect(message).toContain('"caf\u00e9" is not a scope token');
  });

  test('a refused list with a doubled space says an empty scope is at fault', () => {
    expect(refusal('a  b')).toContain('an empty scope');
  });

  test('a value that is not a string is named by its kind', () => {
    expect(refusal(['a'])).toContain('got an array');
  });

  test('a hostile refused list is quoted cut and on one line', () => {
    const message = refusal('a\nb '.repeat(10_000));
    expect(message.length).toBeLessThan(500);
    expect(message).not.toContain('\n');
  });

  test('returns a set that cannot be changed', () => {
    // Its type offers no add, delete or clear; the methods a Set has at run time throw.
    const scopes = parseScopes('a b') as ReadonlySet<string> as Set<string>;
    expect(scopes).toBeInstanceOf(Set);
    expect(() => scopes.add('c')).toThrow(TypeError);
    expect(() => scopes.delete('a')).toThrow(TypeError);
    expect(() => scopes.clear()).toThrow(TypeError);
    expect([...scopes]).toEqual(['a', 'b']);
  });

  test('serialises as a list', () => {
    expect(JSON.stringify(new ScopeSet(['a', 'b']))).toBe('["a","b"]');
    expect(String(new ScopeSet(['a', 'b']))).toBe('a b');
  });
});

describe('hasScopes', () => {
  const granted = parseScopes('pay:processPayments hub:subscribe');

  test('one scope: granted', () => {
    expect(hasScopes(granted, 'hub:subscribe')).toBe(true);
  });

  test('one scope: missing', () => {
    expect(hasScopes(granted, 'pay:chargeToken')).toBe(false);
  });

  test('an array needs all of them', () => {
    expect(hasScopes(granted, ['pay:processPayments', 'hub:subscribe'])).toBe(true);
    expect(hasScopes(granted, ['pay:processPayments', 'pay:chargeToken'])).toBe(false);
  });

  test('{ allOf } needs all of them', () => {
    expect(hasScopes(granted, { allOf: ['pay:processPayments', 'pay:chargeToken'] })).toBe(false);
  });

  test('{ anyOf } needs one of them', () => {
    expect(hasScopes(granted, { anyOf: ['pay:chargeToken', 'hub:subscribe'] })).toBe(true);
    expect(hasScopes(granted, { anyOf: ['pay:chargeToken', 'pay:manageIntegration'] })).toBe(false);
  });

  test('accepts any iterable of granted scopes', () => {
    expect(hasScopes(['a', 'b'], { allOf: ['a', 'b'] })).toBe(true);
  });

  test('a scope list given as a string grants its scopes, not its characters (misuse: hasScopes(auth.claims.scope, …))', () => {
    expect(hasScopes('pay:processPayments', 'p')).toBe(false);
    expect(hasScopes('pay:processPayments hub:subscribe', { allOf: ['pay:processPayments', 'hub:subscribe'] })).toBe(true);
    expect(hasScopes('', { anyOf: ['a'] })).toBe(false);
  });

  test('a scope list given as a string that is not one is a ScopeError', () => {
    expect(() => hasScopes('pay:processPayments\thub:subscribe', 'hub:subscribe')).toThrow(ScopeError);
  });

  test.each([
    ['an empty array', []],
    ['an empty anyOf', { anyOf: [] }],
    ['a scope with a space', 'a b'],
    ['both allOf and anyOf', { allOf: ['a'], anyOf: ['b'] }],
    ['a number', 5],
    ['an unknown key', { oneOf: ['a'] }],
  ])('rejects %s as a requirement', (_name, requirement) => {
    expect(() => hasScopes(granted, requirement as never)).toThrow(TypeError);
  });
});
