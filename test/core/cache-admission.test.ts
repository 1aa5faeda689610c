import { describe, expect, test } from 'vitest';
import { SecondUseFilter } from '../../src/core/cache-admission.js';

/** Whether `other`, offered between two offers of `index`, wiped `index`'s mark. */
function wipes(filter: SecondUseFilter, index: number, other: number): boolean {
  filter.admits(index);
  filter.admits(other);
  return !filter.admits(index);
}

describe('SecondUseFilter', () => {
  test('does not admit an index the first time it is offered', () => {
    expect(new SecondUseFilter(10_000).admits(12_345)).toBe(false);
  });

  test('admits an index the second time it is offered', () => {
    const filter = new SecondUseFilter(10_000);
    filter.admits(12_345);
    expect(filter.admits(12_345)).toBe(true);
  });

  test('keeps admitting an index offered again and again', () => {
    const filter = new SecondUseFilter(10_000);
    const answers = [1, 2, 3, 4].map(() => filter.admits(777));
    expect(answers).toEqual([false, true, true, true]);
  });

  test('does not admit an index whose slot another index has taken since', () => {
    const filter = new SecondUseFilter(10_000);
    expect(wipes(filter, 5, 5 + 32_768)).toBe(true);
  });

  test('an index in another slot leaves a mark alone', () => {
    const filter = new SecondUseFilter(10_000);
    expect(wipes(filter, 5, 6)).toBe(false);
  });

  test('index 0 is marked like any other (an empty slot is not a mark)', () => {
    const filter = new SecondUseFilter(10_000);
    expect([filter.admits(0), filter.admits(0)]).toEqual([false, true]);
  });

  test.each([
    [1, 4096],
    [2048, 4096],
    [10_000, 32_768],
    [10_000_000, 1_048_576],
  ])('with cacheMaxEntries %i it has %i slots', (maxEntries, slots) => {
    expect(wipes(new SecondUseFilter(maxEntries), 9, 9 + slots / 2)).toBe(false);
    expect(wipes(new SecondUseFilter(maxEntries), 9, 9 + slots)).toBe(true);
  });
});
