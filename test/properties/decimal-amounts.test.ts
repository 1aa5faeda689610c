/**
 * Decimal money (src/payment-links/decimal.ts and the amounts of POST /payment-links/), as
 * properties checked against BigInt arithmetic on the digits themselves: parsing and formatting
 * are exact at every magnitude, including the 19 significant digits no binary float holds, and
 * line items add up exactly.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, test } from 'vitest';
import type { AuthContext } from '../../src/index.js';
import { FRACTION_DIGITS, MAX_INTEGER_DIGITS, type PaymentLink, formatDecimal, parseDecimal } from '../../src/payment-links/index.js';
import { fieldErrors, jsonRequest, makeHandler, useCallers, validBody } from '../payment-links/support.js';

const callers = useCallers();
let auth: AuthContext;

beforeAll(async () => {
  auth = await callers.auth();
});

/** The largest amount in units of 1/10 000: fifteen nines, a point, four nines. */
const MAX_UNITS = 10n ** BigInt(MAX_INTEGER_DIGITS + FRACTION_DIGITS) - 1n;
const CANONICAL = /^-?(0|[1-9][0-9]{0,14})\.[0-9]{4}$/;

/** Units of 1/10 000, from 0 up to the largest amount, with small, round and huge values all likely. */
const magnitude = fc.oneof(
  fc.bigInt({ min: 0n, max: 10n ** 8n }),
  fc.bigInt({ min: 0n, max: MAX_UNITS }),
  fc.bigInt({ min: 0n, max: 10n ** 15n - 1n }).map((whole) => whole * 10_000n),
  fc.constantFrom(0n, 1n, 9_999n, 10_000n, MAX_UNITS, MAX_UNITS - 1n, 2n ** 53n, 2n ** 53n + 1n),
);
const units = fc.tuple(magnitude, fc.boolean()).map(([value, negative]) => (negative ? -value : value));

/** The digits of a decimal string without its point, read as one integer: the oracle of every amount. */
function digitsOf(text: string, fractionDigits: number): bigint {
  return BigInt(text.replace('.', '')) * 10n ** BigInt(FRACTION_DIGITS - fractionDigits);
}

/** `units` written as a client may send it: 0 to 4 fractional digits, trailing zeros dropped where exact. */
function written(value: bigint, fractionDigits: number): string {
  const canonical = formatDecimal(value);
  const [whole = '', fraction = ''] = canonical.split('.');
  let kept = fraction;
  while (kept.length > fractionDigits && kept.endsWith('0')) kept = kept.slice(0, -1);
  return kept === '' ? whole : `${whole}.${kept}`;
}

describe('decimal amounts parse and format exactly', () => {
  test('formatDecimal writes every amount canonically, and its digits are the amount', () => {
    fc.assert(
      fc.property(units, (value) => {
        const text = formatDecimal(value);
        expect(text).toMatch(CANONICAL);
        expect(text).not.toBe('-0.0000');
        expect(digitsOf(text, FRACTION_DIGITS)).toBe(value);
      }),
      { numRuns: 500 },
    );
  });

  test('parsing the canonical string gives the amount back', () => {
    fc.assert(
      fc.property(units, (value) => {
        expect(parseDecimal(formatDecimal(value))).toEqual({ ok: true, units: value });
      }),
      { numRuns: 500 },
    );
  });

  test('any accepted way of writing an amount parses to it and formats canonically ("12.5" → "12.5000")', () => {
    fc.assert(
      fc.property(units, fc.integer({ min: 0, max: FRACTION_DIGITS }), (value, fractionDigits) => {
        const text = written(value, fractionDigits);
        const fraction = text.split('.')[1] ?? '';
        expect(digitsOf(text, fraction.length)).toBe(value);
        const parsed = parseDecimal(text);
        expect(parsed).toEqual({ ok: true, units: value });
        expect(formatDecimal(value)).toBe(`${text.split('.')[0]}.${fraction.padEnd(FRACTION_DIGITS, '0')}`);
      }),
      { numRuns: 500 },
    );
    expect(formatDecimal((parseDecimal('12.5') as { units: bigint }).units)).toBe('12.5000');
  });

  test('digit strings of every length are read as BigInt reads them, never through a binary float', () => {
    const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });
    const whole = fc.oneof(
      fc.constant('0'),
      fc.tuple(fc.constantFrom(...'123456789'), digits(0, MAX_INTEGER_DIGITS - 1)).map(([first, rest]) => `${first}${rest}`),
    );
    fc.assert(
      fc.property(whole, digits(0, FRACTION_DIGITS), (integer, fraction) => {
        const text = fraction === '' ? integer : `${integer}.${fraction}`;
        const expected = digitsOf(text, fraction.length);
        expect(parseDecimal(text)).toEqual({ ok: true, units: expected });
      }),
      { numRuns: 500 },
    );
  });

  test('more than four fractional digits or fifteen integer digits are refused, whatever the digits', () => {
    const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });
    fc.assert(
      fc.property(
        digits(1, MAX_INTEGER_DIGITS).filter((d) => !/^0./.test(d)),
        digits(FRACTION_DIGITS + 1, 12),
        (integer, fraction) => {
          expect(parseDecimal(`${integer}.${fraction}`)).toEqual({ ok: false, problem: 'too_many_decimals' });
        },
      ),
      { numRuns: 200 },
    );
    fc.assert(
      fc.property(fc.constantFrom(...'123456789'), digits(MAX_INTEGER_DIGITS, 25), digits(0, FRACTION_DIGITS), (first, rest, fraction) => {
        expect(parseDecimal(fraction === '' ? `${first}${rest}` : `${first}${rest}.${fraction}`)).toEqual({
          ok: false,
          problem: 'too_large',
        });
      }),
      { numRuns: 200 },
    );
  });

  const plain = /^-?(0|[1-9][0-9]{0,14})(\.[0-9]{1,4})?$/;
  const nearMiss = fc
    .tuple(units, fc.nat(), fc.constantFrom('', 'e', '+', ' ', ',', '.', '0', '_', '\u0661', 'x'))
    .map(([value, at, insert]) => {
      const text = formatDecimal(value);
      const index = at % (text.length + 1);
      return `${text.slice(0, index)}${insert}${text.slice(index)}`;
    });

  test.each([
    ['amounts with one character inserted', nearMiss],
    ['arbitrary printable strings', fc.string({ maxLength: 30 })],
    ['arbitrary code points', fc.string({ unit: 'binary', maxLength: 30 })],
  ])('%s never throw, and parse only when they are plain decimals', (_name, text) => {
    fc.assert(
      fc.property(text, (candidate) => {
        const parsed = parseDecimal(candidate);
        expect(parsed.ok).toBe(plain.test(candidate));
        if (parsed.ok) expect(parsed.units).toBe(digitsOf(candidate, (candidate.split('.')[1] ?? '').length));
      }),
      { numRuns: 300 },
    );
  });
});

describe('amounts through POST /payment-links/', () => {
  /** Lines of up to 1e17 units each, so that any five add up within the fifteen integer digits. */
  const line = fc.record({
    excluding: fc.oneof(fc.bigInt({ min: 0n, max: 10n ** 17n }), fc.bigInt({ min: 0n, max: 10n ** 6n })),
    tax: fc.oneof(fc.bigInt({ min: 0n, max: 10n ** 17n }), fc.bigInt({ min: 0n, max: 10n ** 5n })),
    digits: fc.integer({ min: 0, max: FRACTION_DIGITS }),
  });
  const lines = fc.array(line, { minLength: 1, maxLength: 5 }).filter((list) => list.some((item) => item.excluding + item.tax > 0n));

  function lineItems(list: readonly { excluding: bigint; tax: bigint; digits: number }[]) {
    return list.map((item, index) => ({
      quantity: 1,
      description: `Line ${index + 1}`,
      amount_excluding_tax: written(item.excluding, item.digits),
      tax_amount: written(item.tax, item.digits),
      amount_including_tax: written(item.excluding + item.tax, item.digits),
    }));
  }

  test('a link is created for any amount, and returned with its exact value in four fractional digits', async () => {
    const handler = makeHandler();
    await fc.assert(
      fc.asyncProperty(
        magnitude.filter((value) => value > 0n),
        fc.integer({ min: 0, max: FRACTION_DIGITS }),
        async (value, digits) => {
          const response = await handler(jsonRequest(auth, validBody({ amount: written(value, digits), meta: undefined })));
          expect(response.status).toBe(201);
          expect(digitsOf((response.body as PaymentLink).amount, FRACTION_DIGITS)).toBe(value);
        },
      ),
      { numRuns: 100 },
    );
  });

  test('line items whose including-tax amounts add up to amount exactly are accepted and returned exactly', async () => {
    const handler = makeHandler();
    await fc.assert(
      fc.asyncProperty(lines, async (list) => {
        const total = list.reduce((sum, item) => sum + item.excluding + item.tax, 0n);
        const body = validBody({
          amount: written(total, FRACTION_DIGITS),
          payment_details: { line_items: lineItems(list) },
        });
        const response = await handler(jsonRequest(auth, body));
        expect(response.status).toBe(201);
        const stored = await handler.store.get(auth.tenant.ern, (response.body as PaymentLink).id);
        const returned = stored?.payment_details?.line_items ?? [];
        expect(returned.map((item) => digitsOf(item.amount_including_tax, FRACTION_DIGITS))).toEqual(
          list.map((item) => item.excluding + item.tax),
        );
        expect(returned.reduce((sum, item) => sum + digitsOf(item.amount_including_tax, FRACTION_DIGITS), 0n)).toBe(total);
      }),
      { numRuns: 100 },
    );
  });

  test('line items off by one ten-thousandth from amount, either way, are refused and nothing is stored', async () => {
    const handler = makeHandler();
    await fc.assert(
      fc.asyncProperty(lines, fc.constantFrom(-1n, 1n), async (list, offset) => {
        const total = list.reduce((sum, item) => sum + item.excluding + item.tax, 0n);
        fc.pre(total + offset > 0n);
        const before = (await handler.store.list(auth.tenant.ern)).length;
        const body = validBody({
          amount: written(total + offset, FRACTION_DIGITS),
          payment_details: { line_items: lineItems(list) },
        });
        const response = await handler(jsonRequest(auth, body));
        expect(response.status).toBe(400);
        expect(fieldErrors(response)).toContainEqual({ field: 'payment_details.line_items', code: 'amount_mismatch' });
        expect((await handler.store.list(auth.tenant.ern)).length).toBe(before);
      }),
      { numRuns: 100 },
    );
  });
});
