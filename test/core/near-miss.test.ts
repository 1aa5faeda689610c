import { describe, expect, test } from 'vitest';
import { findNearMiss, nearMiss, nearMissesFirst } from '../../src/core/near-miss.js';

describe('nearMiss', () => {
  test.each([
    ['https://a.test/', 'https://a.test', 'a trailing slash'],
    ['https://a.test', 'https://a.test//', 'a trailing slash'],
    ['https://A.test', 'https://a.test', 'letter case'],
    ['HTTPS://a.test', 'https://a.test', 'letter case'],
    ['http://a.test', 'https://a.test', 'http: against https:'],
    [' https://a.test', 'https://a.test', 'surrounding white space'],
    ['http://A.test/', 'https://a.test', 'http: against https: and a trailing slash and letter case'],
    ['Key-1', 'key-1', 'letter case'],
    ['payments', 'payments/', 'a trailing slash'],
    ['a.test', 'https://a.test', 'a missing scheme'],
    ['https://issuer.t\u0435st', 'https://issuer.test', 'a non-ASCII character (U+0435) in place of "e"'],
    ['k\u0435y-\u0031\u0456', 'key-1i', '2 non-ASCII characters (the first U+0435) in place of ASCII ones'],
    [
      'https://I\u0455suer.test/',
      'https://issuer.test',
      'a trailing slash and letter case and a non-ASCII character (U+0455) in place of "s"',
    ],
  ])('%j against %j differs by %s', (given, expected, difference) => {
    expect(nearMiss(given, expected)).toBe(difference);
  });

  test.each([
    ['equal', 'https://a.test', 'https://a.test'],
    ['another host', 'https://b.test', 'https://a.test'],
    ['another path', 'https://a.test/x', 'https://a.test'],
    ['slashes only', '/', '//'],
    ['mostly other non-ASCII text of the same length', 'k\u00e9\u00ff\u4e00', 'keyz'],
    ['an ASCII character in place of a non-ASCII one', 'cafe', 'caf\u00e9'],
  ])('%s is not a near miss', (_name, given, expected) => {
    expect(nearMiss(given, expected)).toBeUndefined();
  });
});

describe('findNearMiss', () => {
  test('returns the first candidate nearly missed, and how', () => {
    expect(findNearMiss('https://a.test/', ['https://b.test', 'https://a.test'])).toEqual({
      candidate: 'https://a.test',
      difference: 'a trailing slash',
    });
  });

  test('returns undefined when none is', () => {
    expect(findNearMiss('https://c.test', ['https://b.test', 'https://a.test'])).toBeUndefined();
  });
});

describe('nearMissesFirst', () => {
  test('lists every candidate, those nearly missed first (with how), each group in its order', () => {
    const ranked = nearMissesFirst('https://b.test/', ['https://a.test', 'https://B.test', 'https://c.test', 'https://b.test']);
    expect(ranked).toEqual([
      { candidate: 'https://B.test', difference: 'a trailing slash and letter case' },
      { candidate: 'https://b.test', difference: 'a trailing slash' },
      { candidate: 'https://a.test' },
      { candidate: 'https://c.test' },
    ]);
  });

  test('keeps the order when none is nearly missed', () => {
    expect(nearMissesFirst('https://z.test', ['https://a.test', 'https://b.test']).map((entry) => entry.candidate)).toEqual([
      'https://a.test',
      'https://b.test',
    ]);
  });
});
