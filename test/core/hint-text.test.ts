import { describe, expect, test } from 'vitest';
import { MAX_HINT_CHARS, MAX_LISTED, MAX_QUOTED_CHARS, capHint, kindOf, oneLineJson, quote, quoteList } from '../../src/core/hint-text.js';

/**
 * Every code unit a log line must not hold raw: C0, DEL, C1, the line separators, bidi controls,
 * and the invisible format characters (a value that differs from another only by one of them
 * would print the same).
 */
const UNSAFE = [
  ...Array.from({ length: 0x20 }, (_unused, code) => code),
  ...Array.from({ length: 0x21 }, (_unused, offset) => 0x7f + offset),
  0x2028,
  0x2029,
  0x061c,
  0x200e,
  0x200f,
  0x202a,
  0x202b,
  0x202c,
  0x202d,
  0x202e,
  0x2066,
  0x2067,
  0x2068,
  0x2069,
  0x00ad,
  0x180e,
  0x200b,
  0x200c,
  0x200d,
  ...Array.from({ length: 5 }, (_unused, offset) => 0x2060 + offset),
  ...Array.from({ length: 6 }, (_unused, offset) => 0x206a + offset),
  0xfeff,
  0xfff9,
  0xfffa,
  0xfffb,
];

describe('hint text', () => {
  test('quote writes a quoted string, escaping quotes, backslashes and control characters', () => {
    expect(quote('a"b\\\n\u001b[31m')).toBe('"a\\"b\\\\\\u000a\\u001b[31m"');
  });

  test.each(UNSAFE.map((code) => [code.toString(16).padStart(4, '0')]))('quote shows U+%s as an escape, never raw', (hex) => {
    const quoted = quote(`a${String.fromCharCode(Number.parseInt(hex, 16))}b`);
    expect(quoted).toBe(`"a\\u${hex}b"`);
  });

  test('quote shows a tag character (invisible text outside the basic plane) as the escapes of its two code units', () => {
    expect(quote('kid\u{E0041}\u{E007F}')).toBe('"kid\\udb40\\udc41\\udb40\\udc7f"');
  });

  test('quote shows every default-ignorable code point (variation selectors, Hangul fillers, CGJ…) as escapes', () => {
    // Each prints as nothing: `"k1\ufe0f"` raw would read as the registered `"k1"`.
    const invisible = /^[\p{Default_Ignorable_Code_Point}\p{Bidi_Control}]$/u;
    const raw: string[] = [];
    for (let code = 0; code <= 0x10ffff; code += 1) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const char = String.fromCodePoint(code);
      if (!invisible.test(char)) continue;
      const escapes = Array.from({ length: char.length }, (_unused, index) => `\\u${char.charCodeAt(index).toString(16).padStart(4, '0')}`);
      if (quote(`a${char}b`) !== `"a${escapes.join('')}b"`) raw.push(`U+${code.toString(16).toUpperCase().padStart(4, '0')}`);
    }
    expect(raw).toEqual([]);
  });

  test('quote keeps a character outside the basic plane and escapes a lone surrogate', () => {
    expect(quote('\u{1F600}')).toBe('"\u{1F600}"');
    expect(quote('a\ud800b')).toBe('"a\\ud800b"');
  });

  test('capHint holds a hint of invisible characters to the cap once they are escaped', () => {
    const hint = capHint('\u200b'.repeat(MAX_HINT_CHARS));
    expect(hint.length).toBeLessThanOrEqual(MAX_HINT_CHARS);
    expect(hint.length).toBeGreaterThan(MAX_HINT_CHARS - 6);
    expect(hint.startsWith('\\u200b\\u200b')).toBe(true);
  });

  test('capHint cuts an escaped hint between two escapes, never within one', () => {
    expect(capHint('\u200b'.repeat(MAX_HINT_CHARS))).toMatch(/^(?:\\u200b)+…$/);
  });

  test('capHint cuts a long hint and escapes what is unsafe in it', () => {
    expect(capHint('x'.repeat(MAX_HINT_CHARS + 5))).toHaveLength(MAX_HINT_CHARS);
    expect(capHint('a\u2028b\u202ec')).toBe('a\\u2028b\\u202ec');
  });

  test(`quote cuts a value longer than ${MAX_QUOTED_CHARS} characters`, () => {
    expect(quote('x'.repeat(MAX_QUOTED_CHARS + 1))).toBe(`"${'x'.repeat(MAX_QUOTED_CHARS)}…"`);
    expect(quote('x'.repeat(MAX_QUOTED_CHARS))).toBe(`"${'x'.repeat(MAX_QUOTED_CHARS)}"`);
  });

  test(`quoteList lists ${MAX_LISTED} values and counts the rest`, () => {
    const values = Array.from({ length: MAX_LISTED + 3 }, (_unused, index) => `k${index}`);
    expect(quoteList(values)).toBe(
      `${values
        .slice(0, MAX_LISTED)
        .map((value) => `"${value}"`)
        .join(', ')} and 3 more`,
    );
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

  test('oneLineJson writes JSON on one line that reads back the same, no control or bidi character raw', () => {
    const value = { kid: 'k\u001b[2J\n\u0085\u2028\u202e\u007f', list: ['a', 1, true, null] };
    const text = oneLineJson(value);
    expect(text).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e]/);
    expect(JSON.parse(text)).toEqual(value);
  });
});
