/**
 * Exact decimal money: decimal strings held as `bigint` counts of 1/10 000 (four fractional
 * digits), never as binary floating point.
 */

/** Fractional digits every amount is held and returned with. */
export const FRACTION_DIGITS = 4;

/** Most integer digits accepted (amounts up to 999 999 999 999 999.9999). */
export const MAX_INTEGER_DIGITS = 15;

const SCALE = 10n ** BigInt(FRACTION_DIGITS);

/** A decimal string: optional `-`, digits without leading zeros, optionally `.` and digits. */
const DECIMAL = /^(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?$/;

/** Why a string is not an acceptable decimal. */
export type DecimalProblem = 'not_decimal' | 'too_many_decimals' | 'too_large';

/** The outcome of {@link parseDecimal}. */
export type DecimalResult = { readonly ok: true; readonly units: bigint } | { readonly ok: false; readonly problem: DecimalProblem };

/**
 * Parses a decimal string such as `"12.5"`, `"0.0001"` or `"-3"` into units of 1/10 000.
 * Refused: exponents, `+`, leading zeros (`"01"`), a bare point (`"1."`, `".5"`), commas, spaces,
 * more than {@link FRACTION_DIGITS} fractional digits, more than {@link MAX_INTEGER_DIGITS} integer digits.
 */
export function parseDecimal(text: string): DecimalResult {
  const match = DECIMAL.exec(text);
  if (match === null) return { ok: false, problem: 'not_decimal' };
  const [, sign = '', whole = '', fraction = ''] = match;
  if (fraction.length > FRACTION_DIGITS) return { ok: false, problem: 'too_many_decimals' };
  if (whole.length > MAX_INTEGER_DIGITS) return { ok: false, problem: 'too_large' };
  const magnitude = BigInt(whole) * SCALE + BigInt(fraction.padEnd(FRACTION_DIGITS, '0'));
  return { ok: true, units: sign === '-' ? -magnitude : magnitude };
}

/**
 * The decimals {@link parseDecimal} accepts that are zero or more, as a regular expression's
 * source (anchored), for schemas: `fixed` for exactly {@link FRACTION_DIGITS} fractional digits
 * (as {@link formatDecimal} writes them), `positive` to leave out zero.
 */
export function decimalPattern(options: { readonly fixed?: boolean; readonly positive?: boolean } = {}): string {
  const fraction = options.fixed === true ? `\\.[0-9]{${FRACTION_DIGITS}}` : `(?:\\.[0-9]{1,${FRACTION_DIGITS}})?`;
  const notZero = options.positive === true ? '(?!0(?:\\.0*)?$)' : '';
  return `^${notZero}(?:0|[1-9][0-9]{0,${MAX_INTEGER_DIGITS - 1}})${fraction}$`;
}

/** Formats units of 1/10 000 with exactly {@link FRACTION_DIGITS} fractional digits (`125000n` → `"12.5000"`). */
export function formatDecimal(units: bigint): string {
  const negative = units < 0n;
  const magnitude = negative ? -units : units;
  const whole = magnitude / SCALE;
  const fraction = (magnitude % SCALE).toString().padStart(FRACTION_DIGITS, '0');
  return `${negative ? '-' : ''}${whole}.${fraction}`;
}

/** Units of 1/10 000 for a whole number (`100` → `1000000n`). */
export function wholeUnits(value: number | bigint): bigint {
  return BigInt(value) * SCALE;
}
