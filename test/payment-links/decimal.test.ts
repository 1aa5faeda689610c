import { describe, expect, it } from 'vitest';
import { formatDecimal, parseDecimal } from '../../src/payment-links/index.js';

describe('parseDecimal', () => {
  it.each([
    ['12.5', 125_000n],
    ['12', 120_000n],
    ['0.0001', 1n],
    ['0', 0n],
    ['-3.25', -32_500n],
    ['999999999999999.9999', 9_999_999_999_999_999_999n],
  ])('reads %j exactly as %s ten-thousandths', (text, units) => {
    expect(parseDecimal(text)).toEqual({ ok: true, units });
  });

  it.each(['', '1.', '.5', '+1', '01', '00.5', '1e3', '1,5', ' 1', '1 ', '0x10', 'NaN', 'Infinity', '1.2.3', '١٢'])(
    'refuses %j as not a decimal',
    (text) => {
      expect(parseDecimal(text)).toEqual({ ok: false, problem: 'not_decimal' });
    },
  );

  it('refuses more than four fractional digits, even trailing zeros', () => {
    expect(parseDecimal('1.00001')).toEqual({ ok: false, problem: 'too_many_decimals' });
    expect(parseDecimal('1.00000')).toEqual({ ok: false, problem: 'too_many_decimals' });
  });

  it('refuses more than fifteen integer digits', () => {
    expect(parseDecimal('1000000000000000')).toEqual({ ok: false, problem: 'too_large' });
  });

  it('adds amounts without binary rounding: 0.1 + 0.2 is 0.3', () => {
    const sum = [parseDecimal('0.1'), parseDecimal('0.2')].reduce((total, part) => total + (part.ok ? part.units : 0n), 0n);
    expect(parseDecimal('0.3')).toEqual({ ok: true, units: sum });
  });
});

describe('formatDecimal', () => {
  it.each([
    [125_000n, '12.5000'],
    [1n, '0.0001'],
    [0n, '0.0000'],
    [-32_500n, '-3.2500'],
    [9_999_999_999_999_999_999n, '999999999999999.9999'],
  ])('writes %s as %j with exactly four fractional digits', (units, text) => {
    expect(formatDecimal(units)).toBe(text);
  });
});
