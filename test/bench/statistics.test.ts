import { describe, expect, it } from 'vitest';
import { combineVerdicts, judgeMedian, median, medianInterval, verdictText } from '../../bench/lib/statistics.mjs';

/** 1, 2, …, n in a shuffled order: the interval must not depend on the order of the rounds. */
function shuffledRange(n: number): number[] {
  const values = Array.from({ length: n }, (_, index) => index + 1);
  for (let index = n - 1; index > 0; index -= 1) {
    const other = (index * 7 + 3) % (index + 1);
    [values[index], values[other]] = [values[other] as number, values[index] as number];
  }
  return values;
}

describe('median', () => {
  it('is the middle value of an odd count', () => {
    expect(median([5, 1, 3])).toBe(3);
  });

  it('is the mean of the two middle values of an even count', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });
});

describe('medianInterval', () => {
  it('takes the 4th smallest and 4th largest of 15 rounds, covering the median 96.5 % of the time', () => {
    const interval = medianInterval(shuffledRange(15));
    expect([interval.low, interval.median, interval.high]).toEqual([4, 8, 12]);
    // 1 − 2 · P(Binomial(15, ½) ≤ 3) = 1 − 2 · 576 / 32768
    expect(interval.coverage).toBeCloseTo(1 - (2 * 576) / 32768, 12);
  });

  it('takes the 6th smallest and 6th largest of 20 rounds', () => {
    const interval = medianInterval(shuffledRange(20));
    expect([interval.low, interval.high]).toEqual([6, 15]);
    // 1 − 2 · P(Binomial(20, ½) ≤ 5) = 1 − 2 · 21700 / 1048576
    expect(interval.coverage).toBeCloseTo(1 - (2 * 21_700) / 1_048_576, 12);
  });

  it('widens to the whole range when the rounds are too few for the confidence asked', () => {
    const interval = medianInterval([3, 1, 2, 5, 4]);
    expect([interval.low, interval.high]).toEqual([1, 5]);
    expect(interval.coverage).toBe(1 - 2 / 32);
  });

  it('narrows when less confidence is asked', () => {
    const interval = medianInterval(shuffledRange(15), 0.8);
    // k = 5: 1 − 2 · P(X ≤ 4) = 0.8815; k = 6 would give 0.6982.
    expect([interval.low, interval.high]).toEqual([5, 11]);
  });

  it('refuses an empty list, a non-number and a confidence outside (0, 1)', () => {
    expect(() => medianInterval([])).toThrow(/values must be a non-empty array of finite numbers/);
    expect(() => medianInterval([1, Number.NaN])).toThrow(/finite numbers/);
    expect(() => medianInterval([1, 2], 1)).toThrow(/confidence must lie between 0 and 1/);
  });
});

describe('judgeMedian', () => {
  const around = (centre: number): number[] => shuffledRange(15).map((value) => centre + (value - 8) / 100);

  it('decides a target whose interval lies wholly above its line', () => {
    expect(judgeMedian(around(1), 0.9)).toMatchObject({ pass: true, decided: true });
  });

  it('decides a miss whose interval lies wholly below the line', () => {
    expect(judgeMedian(around(0.8), 0.9)).toMatchObject({ pass: false, decided: true });
  });

  it('passes by the median but leaves it undecided when the interval spans the line', () => {
    expect(judgeMedian(around(0.92), 0.9)).toMatchObject({ pass: true, decided: false });
  });

  it('misses by the median but leaves it undecided when the interval spans the line', () => {
    expect(judgeMedian(around(0.88), 0.9)).toMatchObject({ pass: false, decided: false });
  });

  it('passes a median on the line unless the line is strict', () => {
    expect(judgeMedian(around(1), 1).pass).toBe(true);
    expect(judgeMedian(around(1), 1, { strict: true }).pass).toBe(false);
  });

  it('reads "at most" when asked', () => {
    expect(judgeMedian(around(0), 0.05, { above: false })).toMatchObject({ pass: true, decided: true });
  });
});

describe('combineVerdicts', () => {
  const held = { pass: true, decided: true };
  const heldBarely = { pass: true, decided: false };
  const missedBarely = { pass: false, decided: false };
  const missed = { pass: false, decided: true };

  it('holds, decided, only when every part holds beyond doubt', () => {
    expect(combineVerdicts([held, held])).toEqual({ pass: true, decided: true });
    expect(combineVerdicts([held, heldBarely])).toEqual({ pass: true, decided: false });
  });

  it('misses, decided, when any part misses beyond doubt', () => {
    expect(combineVerdicts([heldBarely, missed])).toEqual({ pass: false, decided: true });
  });

  it('misses, undecided, when the parts that miss do so within their intervals', () => {
    expect(combineVerdicts([held, missedBarely])).toEqual({ pass: false, decided: false });
  });
});

describe('verdictText', () => {
  it('says yes or no, and when the run cannot tell', () => {
    expect(verdictText({ pass: true, decided: true })).toBe('yes');
    expect(verdictText({ pass: false, decided: true })).toBe('**no**');
    expect(verdictText({ pass: false, decided: false })).toBe('**no** (the interval spans the line)');
  });
});
