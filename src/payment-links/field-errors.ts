/**
 * Field errors of a request body: every invalid field is reported at once, each with its path
 * (`payment_details.line_items[2].tax_amount`), a stable code and a message.
 */

/** Stable codes of a {@link FieldError}. New codes may be added, none renamed. */
export type FieldErrorCode =
  /** A required field is missing (or `null`). */
  | 'required'
  /** The body names a field this operation does not know. */
  | 'unknown_field'
  /** The body repeats a member name within one object (`{"amount":"1","amount":"2"}`). */
  | 'duplicate_field'
  /** The JSON type is wrong (a number where a string belongs, say). */
  | 'invalid_type'
  /** A string of the wrong shape (a decimal, e-mail address, telephone number, locale, reference). */
  | 'invalid_format'
  /** A decimal with more than four fractional digits. */
  | 'too_many_decimals'
  /** A number or amount outside its bounds. */
  | 'out_of_range'
  /** A string longer than its bound (or empty where text is required). */
  | 'invalid_length'
  /** An array or object with more entries than allowed, or none where one is needed. */
  | 'invalid_count'
  /** Not one of the allowed values. */
  | 'invalid_value'
  /** A currency code that is not an ISO 4217 payment currency. */
  | 'unknown_currency'
  /** A `meta` key that could be mistaken for an object's prototype (`__proto__`, `constructor`, `prototype`). */
  | 'reserved_key'
  /** Neither `email` nor `phone` is given. */
  | 'email_or_phone_required'
  /** The referenced resource does not exist in the caller's tenant. */
  | 'not_found'
  /** The department has no store to take payments. */
  | 'no_store'
  /** Amounts that must add up do not. */
  | 'amount_mismatch';

/** One invalid field. */
export interface FieldError {
  /** Where: `amount`, `meta.order_id`, `payment_details.line_items[2].tax_amount`. */
  readonly field: string;
  readonly code: FieldErrorCode;
  /** For a person; never echoes a long value. */
  readonly message: string;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The path of a member of `parent`: `parent.name`, or `parent["odd name"]` when `name` is not an identifier. */
export function memberPath(parent: string, name: string): string {
  if (!IDENTIFIER.test(name)) return `${parent}[${JSON.stringify(name)}]`;
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

  get size(): number {
    return this.#errors.length;
  }

  list(): readonly FieldError[] {
    return Object.freeze([...this.#errors]);
  }
}
