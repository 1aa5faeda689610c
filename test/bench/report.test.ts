import { describe, expect, it } from 'vitest';
import { intervalText, ratioAgainst, signed } from '../../bench/lib/report.mjs';

describe('ratioAgainst', () => {
  it('shows two decimals when they do not reach the line the ratio misses', () => {
    expect(ratioAgainst(0.87, 0.9)).toBe('0.87');
    expect(ratioAgainst(0.91, 0.9)).toBe('0.91');
  });

  it('adds decimals until a ratio under its line no longer prints as the line', () => {
    expect(ratioAgainst(0.897, 0.9)).toBe('0.897');
    expect(ratioAgainst(0.8996, 0.9)).toBe('0.8996');
    expect(ratioAgainst(1.4951, 1.5)).toBe('1.495');
  });
});

describe('signed', () => {
  it('writes a negative number with a minus sign, not a hyphen', () => {
    expect(signed('-3.4')).toBe('−3.4');
    expect(signed('3.4')).toBe('3.4');
  });
});

describe('intervalText', () => {
  it('gives the coverage, rounded down, and both ends', () => {
    expect(intervalText({ low: 0.82, high: 0.95, coverage: 0.9648 })).toBe('96 % interval 0.82 to 0.95');
  });

  it('gives an end more decimals when it would print as the line it misses', () => {
    expect(intervalText({ low: 0.85, high: 0.8996, coverage: 0.959, line: 0.9 })).toBe('95 % interval 0.85 to 0.8996');
    expect(intervalText({ low: 0.85, high: 0.9, coverage: 0.959, line: 0.9 })).toBe('95 % interval 0.85 to 0.90');
  });

  it('maps ratios to costs, lowest first, with their unit and minus signs', () => {
    const cost = (value: number): number => (1 - value) * 100;
    expect(intervalText({ low: 0.9496, high: 1.03, coverage: 0.96, line: 0.95 }, { map: cost, digits: 1, unit: ' %' })).toBe(
      '96 % interval −3.0 to 5.04 %',
    );
  });
});
