import { describe, expect, test } from 'vitest';
import type { MemberPath } from '../../src/core/duplicate-members.js';
import { parseJsonObject, repeatedMember } from '../../src/core/json-object.js';

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
