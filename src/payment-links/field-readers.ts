/**
 * Readers for the fields of a JSON object: each returns the valid value, or `undefined` after
 * recording why it is not valid, so that one pass reports every invalid field.
 */
import { MAX_LISTED, isJsonObject as isPlainObject, isStorableText, nearestName, quote } from '../internal/index.js';
import { FRACTION_DIGITS, MAX_INTEGER_DIGITS, parseDecimal } from './decimal.js';
import { type FieldErrors, memberPath } from './field-errors.js';

/** A JSON object as parsed (own enumerable string keys). */
export type JsonObject = Readonly<Record<string, unknown>>;

/** `true` for a JSON object (not an array, not `null`). */
export const isJsonObject: (value: unknown) => value is JsonObject = isPlainObject;

/** The JSON type of a value, for messages. */
export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return 'a number';
  if (typeof value === 'boolean') return 'a boolean';
  return typeof value;
}

/** What to do about the unknown member `name`: the known field it nearly spells, or the fields there are. */
function fieldAdvice(name: string, known: ReadonlySet<string>): string {
  const nearest = nearestName(name, known);
  if (nearest !== undefined) return `did you mean "${nearest}"?`;
  return `remove it (the fields here are ${[...known].join(', ')})`;
}

/**
 * Records `unknown_field` for the members of `object` not in `known`: each by name when they are
 * at most one more than {@link MAX_LISTED}; otherwise the first {@link MAX_LISTED} by name and one
 * more error, at the next of them, counting the rest. A body of thousands of unknown members (they
 * fit in 64 KiB) is answered in a few hundred bytes, not with a listing of each.
 */
export function rejectUnknownFields(object: JsonObject, known: ReadonlySet<string>, parent: string, errors: FieldErrors): void {
  const named: string[] = [];
  let found = 0;
  for (const name of Object.keys(object)) {
    if (known.has(name)) continue;
    found += 1;
    if (named.length <= MAX_LISTED) named.push(name);
  }
  for (const [index, name] of named.entries()) {
    const more = index === MAX_LISTED ? found - MAX_LISTED - 1 : 0;
    const message =
      more === 0
        ? `${quote(name)} is not a field of this request; ${fieldAdvice(name, known)}.`
        : `${quote(name)} and ${more} more members not listed here are not fields of this request; remove them.`;
    errors.add(memberPath(parent, name), 'unknown_field', message);
  }
}

/** A member's value: `undefined` when absent or `null`; `required` recorded when it must be present. */
export function member(object: JsonObject, name: string, path: string, errors: FieldErrors, required: boolean): unknown {
  const value = Object.hasOwn(object, name) ? object[name] : undefined;
  if (value === undefined || value === null) {
    if (required) errors.add(path, 'required', `${name} is required.`);
    return undefined;
  }
  return value;
}

/** Rules of a text field. Lengths count characters (Unicode code points), as JSON Schema does. */
export interface TextRule {
  readonly required: boolean;
  /** Fewest characters. @default 0 */
  readonly minLength?: number;
  readonly maxLength: number;
}

/** Rules of a text field of a given shape. */
export interface PatternRule extends TextRule {
  /** The whole value must match (anchored). */
  readonly pattern: RegExp;
  /** The shape, for messages ("an e-mail address such as …"). */
  readonly expected: string;
}

/** The characters (code points) of `value`: a character outside the BMP is one, not two code units. */
export function characterCount(value: string): number {
  let count = 0;
  for (const _ of value) count += 1;
  return count;
}

/**
 * The characters of `value`, counted one by one only where its UTF-16 length cannot settle the
 * bounds (exact whenever `value` is outside them).
 */
function characters(value: string, minLength: number, maxLength: number): number {
  if (value.length <= maxLength && minLength <= 1) return value.length;
  return characterCount(value);
}

/** `true` when `value` has from `minLength` to `maxLength` characters. */
export function withinLength(value: string, minLength: number, maxLength: number): boolean {
  const length = characters(value, minLength, maxLength);
  return length >= minLength && length <= maxLength;
}

/** The message of a text {@link isStorableText} refuses. */
export function unstorableText(name: string, value: string): string {
  return `${name} must be text without U+0000 or a lone surrogate (an unpaired "\\ud800"-style escape), got ${quote(value)}.`;
}

/** A string member within its length bounds. */
export function readText(object: JsonObject, name: string, path: string, errors: FieldErrors, rule: TextRule): string | undefined {
  const value = member(object, name, path, errors, rule.required);
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    errors.add(path, 'invalid_type', `${name} must be a string, not ${jsonType(value)}.`);
    return undefined;
  }
  const minLength = rule.minLength ?? 0;
  if (!withinLength(value, minLength, rule.maxLength)) {
    const bounds = minLength > 0 ? `${minLength} to ${rule.maxLength} characters` : `at most ${rule.maxLength} characters`;
    errors.add(path, 'invalid_length', `${name} must be ${bounds} long, got ${characterCount(value)}.`);
    return undefined;
  }
  if (!isStorableText(value)) {
    errors.add(path, 'invalid_format', unstorableText(name, value));
    return undefined;
  }
  return value;
}

/** A string member matching `pattern`. */
export function readPatterned(object: JsonObject, name: string, path: string, errors: FieldErrors, rule: PatternRule): string | undefined {
  const value = readText(object, name, path, errors, rule);
  if (value === undefined) return undefined;
  if (!rule.pattern.test(value)) {
    errors.add(path, 'invalid_format', `${name} must be ${rule.expected}, got ${quote(value)}.`);
    return undefined;
  }
  return value;
}

/** Rules of a whole-number field. */
export interface IntegerRule {
  readonly required: boolean;
  readonly min: number;
  readonly max: number;
}

/** A whole-number member within bounds (a JSON number; a numeric string is refused). */
export function readInteger(object: JsonObject, name: string, path: string, errors: FieldErrors, rule: IntegerRule): number | undefined {
  const value = member(object, name, path, errors, rule.required);
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    errors.add(
      path,
      'invalid_type',
      `${name} must be a whole number, ${typeof value === 'number' ? `got ${value}` : `not ${jsonType(value)}`}.`,
    );
    return undefined;
  }
  if (value < rule.min || value > rule.max) {
    errors.add(path, 'out_of_range', `${name} must be from ${rule.min} to ${rule.max}, got ${value}.`);
    return undefined;
  }
  return value;
}

/** Bounds of a decimal field, in units of 1/10 000. */
export interface DecimalRule {
  readonly required: boolean;
  /** Smallest value allowed. */
  readonly min: bigint;
  /** `min` itself is not allowed. */
  readonly exclusiveMin?: boolean;
  /** Largest value allowed. @default no bound beyond the digit limits */
  readonly max?: bigint;
  /** The bounds, for messages ("greater than 0"). */
  readonly expected: string;
}

/** A decimal-string member (never a JSON number), in units of 1/10 000. */
export function readDecimal(object: JsonObject, name: string, path: string, errors: FieldErrors, rule: DecimalRule): bigint | undefined {
  const value = member(object, name, path, errors, rule.required);
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    // A number is named as parsed (a long one already rounded: the very fault of money as a float).
    const hint =
      typeof value === 'number' ? `, got ${value} (money is sent as a decimal string such as "12.50", never as a JSON number)` : '';
    errors.add(path, 'invalid_type', `${name} must be a decimal string, not ${jsonType(value)}${hint}.`);
    return undefined;
  }
  const parsed = parseDecimal(value);
  if (!parsed.ok) {
    const found = quote(value);
    if (parsed.problem === 'too_many_decimals')
      errors.add(path, 'too_many_decimals', `${name} has more than ${FRACTION_DIGITS} fractional digits, got ${found}.`);
    else if (parsed.problem === 'too_large')
      errors.add(path, 'out_of_range', `${name} has more than ${MAX_INTEGER_DIGITS} integer digits, got ${found}.`);
    else errors.add(path, 'invalid_format', `${name} must be a decimal number with a point, such as "12.50", got ${found}.`);
    return undefined;
  }
  // "-0" is zero written with a sign: below a minimum of zero, as any signed amount is.
  const signedZero = parsed.units === 0n && value.startsWith('-') && rule.min >= 0n;
  const belowMin = signedZero || (rule.exclusiveMin === true ? parsed.units <= rule.min : parsed.units < rule.min);
  if (belowMin || (rule.max !== undefined && parsed.units > rule.max)) {
    errors.add(path, 'out_of_range', `${name} must be ${rule.expected}, got ${quote(value)}.`);
    return undefined;
  }
  return parsed.units;
}
