import { describe, expect, test } from 'vitest';
import type { MemberPath } from '../../src/core/duplicate-members.js';
import { parseJsonObject, repeatedMember, sanitizeAndFreeze } from '../../src/core/json-object.js';

describe('parseJsonObject', () => {
  test('parses an object whose names are distinct', () => {
    expect(parseJsonObject('{"alg":"RS256","kid":"k1"}')).toEqual({ alg: 'RS256', kid: 'k1' });
  });

  test.each([
    ['a repeated top-level name (attack: alg none read by another parser)', '{"alg":"none","alg":"RS256"}'],
    ['a repeated name written once with an escape', '{"iss":"a","\\u0069ss":"b"}'],
    ['a repeated name in a nested object', '{"cnf":{"jkt":"a","jkt":"b"}}'],
    ['not JSON', '{"alg":'],
    ['an array', '[{"alg":"RS256"}]'],
    ['null', 'null'],
  ])('refuses %s', (_name, text) => {
    expect(parseJsonObject(text)).toBeUndefined();
  });
});

describe('repeatedMember', () => {
  test.each<[string, MemberPath | undefined]>([
    ['{"alg":"none","alg":"RS256"}', ['alg']],
    ['{"cnf":{"jkt":"a","jkt":"b"}}', ['cnf', 'jkt']],
    ['{"a b":1,"a b":2}', ['a b']],
    ['[1]', undefined],
    ['{', undefined],
  ])('finds the repeat in %s', (text, path) => {
    expect(repeatedMember(text)).toEqual(path);
  });
});

describe('sanitizeAndFreeze', () => {
  test('removes __proto__ and constructor keys at every depth, not only at the top (attack: prototype pollution through a nested claim)', () => {
    const claims = sanitizeAndFreeze(JSON.parse('{"a":{"b":[{"__proto__":{"admin":true},"constructor":{"x":1},"c":1}]}}'));
    const inner = (claims as { a: { b: Record<string, unknown>[] } }).a.b[0] as Record<string, unknown>;
    expect(Object.hasOwn(inner, '__proto__')).toBe(false);
    expect(Object.hasOwn(inner, 'constructor')).toBe(false);
    expect(inner).toEqual({ c: 1 });
  });

  test('freezes a value nested far deeper than the call stack allows, without overflowing it', () => {
    const depth = 200_000;
    const value = JSON.parse(`${'{"a":'.repeat(depth)}{"__proto__":1}${'}'.repeat(depth)}`) as Record<string, unknown>;
    expect(() => sanitizeAndFreeze(value)).not.toThrow();
    let innermost = value;
    for (let level = 0; level < depth; level += 1) innermost = innermost.a as Record<string, unknown>;
    expect(Object.isFrozen(innermost)).toBe(true);
    expect(Object.hasOwn(innermost, '__proto__')).toBe(false);
  });
});
