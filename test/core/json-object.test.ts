import { describe, expect, test } from 'vitest';
import { jsonObjectFailure, parseJsonObject } from '../../src/core/json-object.js';

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

describe('jsonObjectFailure', () => {
  test.each([
    ['{"alg":"none","alg":"RS256"}', 'The token header repeats the member "alg"; each member name may appear once.'],
    ['{"cnf":{"jkt":"a","jkt":"b"}}', 'The token header repeats the member "cnf.jkt"; each member name may appear once.'],
    ['{"a b":1,"a b":2}', 'The token header repeats the member ["a b"]; each member name may appear once.'],
    ['[1]', 'The token header is not a JSON object.'],
    ['{', 'The token header is not a JSON object.'],
  ])('explains %s', (text, message) => {
    expect(jsonObjectFailure('The token header', text)).toBe(message);
  });
});
