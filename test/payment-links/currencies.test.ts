import { describe, expect, it } from 'vitest';
import { ISO_4217_CODES, NON_PAYMENT_CODES, isPaymentCurrency } from '../../src/payment-links/index.js';

describe('the shipped ISO 4217 list', () => {
  it('holds unique three-letter upper-case codes in alphabetical order', () => {
    expect(ISO_4217_CODES.every((code) => /^[A-Z]{3}$/.test(code))).toBe(true);
    expect(new Set(ISO_4217_CODES).size).toBe(ISO_4217_CODES.length);
    expect([...ISO_4217_CODES].sort()).toEqual(ISO_4217_CODES);
  });

  it.each(['EUR', 'USD', 'DKK', 'SEK', 'NOK', 'JPY', 'BHD', 'XCG', 'ZWG', 'SLE', 'VED'])('accepts %s', (code) => {
    expect(isPaymentCurrency(code)).toBe(true);
  });

  it.each(['ANG', 'CUC', 'HRK', 'SLL', 'ZWL', 'DEM', 'BTC', 'EURO', 'eur', ''])(
    'refuses %j (withdrawn, never listed or not a code)',
    (code) => {
      expect(isPaymentCurrency(code)).toBe(false);
    },
  );

  it('refuses the codes that name no currency, though they are in the list', () => {
    for (const code of NON_PAYMENT_CODES) {
      expect(ISO_4217_CODES).toContain(code);
      expect(isPaymentCurrency(code)).toBe(false);
    }
  });
});
