/**
 * Field errors of a request body: every invalid field is reported at once, each with its path
 * (`payment_details.line_items[2].tax_amount`), a stable code and a message.
 */
import { MAX_QUOTED_CHARS, quote } from '../internal/index.js';

/** Stable codes of a {@link FieldError}. New codes may be added, none renamed. */
export type FieldErrorCode =
  | 'required'
  | 'unknown_field'
  | 'duplicate_field'
  | 'invalid_type'
  | 'invalid_format'
  | 'too_many_decimals'
  | 'out_of_range'
  | 'invalid_length'
  | 'invalid_count'
  | 'invalid_value'
  | 'unknown_currency'
  | 'reserved_key'
  | 'email_or_phone_required'
  | 'not_found'
  | 'no_store'
  | 'amount_mismatch';

/** What each {@link FieldErrorCode} means. */
export const FIELD_ERROR_CODES: Readonly<Record<FieldErrorCode, string>> = Object.freeze({
  required: 'A required field is missing (or `null`).',
  unknown_field: 'The body names a field this operation does not know.',
  duplicate_field: 'The body repeats a member name within one object (`{"amount":"1","amount":"2"}`).',
  invalid_type: 'The JSON type is wrong (a number where a string belongs, say).',
  invalid_format: 'A string of the wrong shape (a decimal, e-mail address, telephone number, locale, reference).',
  too_many_decimals: 'A decimal with more than four fractional digits.',
  out_of_range: 'A number or amount outside its bounds.',
  invalid_length: 'A string longer than its bound (or empty where text is required).',
  invalid_count: 'An array or object with more entries than allowed, or none where one is needed.',
  invalid_value: 'Not one of the allowed values.',
  unknown_currency: 'A currency code that is not an ISO 4217 payment currency.',
  reserved_key: "A `meta` key that could be mistaken for an object's prototype (`__proto__`, `constructor`, `prototype`).",
  email_or_phone_required: 'Neither `email` nor `phone` is given.',
  not_found: "The referenced resource does not exist in the caller's tenant.",
  no_store: 'The department has no store to take payments.',
  amount_mismatch: 'Amounts that must add up do not.',
});

/** One invalid field. */
export interface FieldError {
  /** Where: `amount`, `meta.order_id`, `payment_details.line_items[2].tax_amount`. */
  readonly field: string;
  readonly code: FieldErrorCode;
  /** For a person: the rule and the value found (a text cut and escaped, never a long value whole). */
  readonly message: string;
}

/**
 * Most errors a 400 lists; `detail` gives how many there are. A body within the size limit can
 * hold thousands of invalid fields (100 line items of 7 fields each, values that quote long):
 * the answer stays a few kilobytes, not a multiple of the body.
 */
export const MAX_LISTED_FIELD_ERRORS = 50;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The path of a member of `parent`: `parent.name`, or `parent["odd name"]` when `name` is not an
 * identifier or is longer than {@link MAX_QUOTED_CHARS}; a quoted name is cut and escaped as
 * `quote` writes it (names come from the body: hostile).
 */
export function memberPath(parent: string, name: string): string {
  if (name.length > MAX_QUOTED_CHARS || !IDENTIFIER.test(name)) return `${parent}[${quote(name)}]`;
  return parent === '' ? name : `${parent}.${name}`;
}

/** The path of an array element: `parent[index]`. */
export function indexPath(parent: string, index: number): string {
  return `${parent}[${index}]`;
}

/** Collects field errors in the order they are found. */
export class FieldErrors {
  readonly #errors: FieldError[] = [];

  add(field: string, code: FieldErrorCode, message: string): void {
    this.#errors.push(Object.freeze({ field, code, message }));
  }

  /** `true` when an error has been recorded for `field` or one of its members. */
  has(field: string): boolean {
    return this.#errors.some(
      (error) => error.field === field || error.field.startsWith(`${field}.`) || error.field.startsWith(`${field}[`),
    );
  }

  /** How many errors were recorded (all of them, listed or not). */
  get size(): number {
    return this.#errors.length;
  }

  /** The first {@link MAX_LISTED_FIELD_ERRORS} errors, in the order found. */
  list(): readonly FieldError[] {
    return Object.freeze(this.#errors.slice(0, MAX_LISTED_FIELD_ERRORS));
  }
}
