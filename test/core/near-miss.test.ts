import { describe, expect, test } from 'vitest';
import { findNearMiss, nearMiss, nearMissesFirst, withoutTrailingSlashes } from '../../src/core/near-miss.js';

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

describe("a frozen list of candidates (the verifier's issuers, one per registry)", () => {
  /** `values` frozen, behind a proxy that counts the reads of its members. */
  function counted(values: readonly string[]): { list: readonly string[]; reads: () => number } {
    let reads = 0;
    const list = new Proxy(Object.freeze([...values]), {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads += 1;
        return Reflect.get(target, key, receiver);
      },
    });
    return { list, reads: () => reads };
  }
  const issuers = Array.from({ length: 1000 }, (_, index) => `https://i${index}.example`);

  test('is read once for every hint after: a token naming another issuer costs no pass over its texts', () => {
    const { list, reads } = counted(issuers);
    nearMissesFirst('https://evil.example', list, 20);
    const first = reads();
    nearMissesFirst('https://evil2.example', list, 20);
    findNearMiss('https://I1.example', list);
    expect([first, reads()]).toEqual([1000, 1000]);
  });

  test('still ranks a near miss first on a later hint', () => {
    const { list } = counted(issuers);
    nearMissesFirst('https://evil.example', list, 20);
    expect(nearMissesFirst('https://I7.example/', list, 2)).toEqual([
      { candidate: 'https://i7.example', difference: 'a trailing slash and letter case' },
      { candidate: 'https://i0.example' },
    ]);
  });

  test('an unfrozen list is read again each time (it may have changed)', () => {
    const values = ['https://a.example'];
    expect(findNearMiss('https://b.example/', values)).toBeUndefined();
    values.push('https://b.example');
    expect(findNearMiss('https://b.example/', values)).toEqual({ candidate: 'https://b.example', difference: 'a trailing slash' });
  });
});

describe('withoutTrailingSlashes', () => {
  test.each([
    ['https://pay.example/l/', 'https://pay.example/l'],
    ['https://pay.example/l//', 'https://pay.example/l'],
    ['https://pay.example/l', 'https://pay.example/l'],
    ['a//b', 'a//b'],
    ['///', ''],
    ['', ''],
  ])('%j is %j', (text, expected) => {
    expect(withoutTrailingSlashes(text)).toBe(expected);
  });
});
