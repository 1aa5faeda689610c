import { describe, expect, test } from 'vitest';
import { MAX_LISTED, MAX_QUOTED_CHARS, kindOf, quote, quoteList } from '../../src/core/hint-text.js';

describe('hint text', () => {
  test('quote writes a JSON string, escaping control characters', () => {
    expect(quote('a"b\n\u001b[31m')).toBe('"a\\"b\\n\\u001b[31m"');
  });

  test(`quote cuts a value longer than ${MAX_QUOTED_CHARS} characters`, () => {
    expect(quote('x'.repeat(MAX_QUOTED_CHARS + 1))).toBe(`"${'x'.repeat(MAX_QUOTED_CHARS)}…"`);
    expect(quote('x'.repeat(MAX_QUOTED_CHARS))).toBe(`"${'x'.repeat(MAX_QUOTED_CHARS)}"`);
  });

  test(`quoteList lists ${MAX_LISTED} values and counts the rest`, () => {
    const values = Array.from({ length: MAX_LISTED + 3 }, (_unused, index) => `k${index}`);
    expect(quoteList(values)).toBe(`${values.slice(0, MAX_LISTED).map((value) => `"${value}"`).join(', ')} and 3 more`);
    expect(quoteList([])).toBe('none');
  });

  test.each([
    [undefined, 'missing'],
    [null, 'null'],
    [[], 'an array'],
    [{}, 'an object'],
    [1, 'a number'],
    [true, 'a boolean'],
    ['s', 'a string'],
  ])('kindOf(%j) is %s, never the value', (value, kind) => {
    expect(kindOf(value)).toBe(kind);
  });
});
