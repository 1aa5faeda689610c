/**
 * `payment_details.line_items`: what the shopper pays for, line by line.
 *
 * Amounts are per line (the line's total, quantity already applied): `quantity` is shown to the
 * shopper and does not multiply them. Each line must hold
 * `amount_including_tax = amount_excluding_tax + tax_amount` exactly, and the lines'
 * `amount_including_tax` must add up to the link's `amount` exactly. `tax_percentage` is shown,
 * not recomputed: rounding rules for tax differ between tenants and countries.
 */
import { formatDecimal, parseDecimal, wholeUnits } from './decimal.js';
import { type FieldErrors, indexPath, memberPath } from './field-errors.js';
import {
  type DecimalRule,
  type IntegerRule,
  type JsonObject,
  type TextRule,
  isJsonObject,
  jsonType,
  member,
  readDecimal,
  readInteger,
  readText,
  rejectUnknownFields,
} from './field-readers.js';

/** Bounds of line items. */
export const LINE_ITEM_LIMITS = Object.freeze({
  /** Most lines per link. */
  maxItems: 100,
  /** Largest `quantity`. */
  maxQuantity: 1_000_000,
  /** Longest `description`, in characters. */
  maxDescriptionLength: 500,
  /** Longest `id`, in characters. */
  maxIdLength: 100,
});

/** One validated line; amounts in units of 1/10 000. */
export interface LineItem {
  readonly quantity: number;
  readonly description: string;
  readonly id: string | null;
  readonly amountExcludingTax: bigint;
  readonly taxAmount: bigint;
  readonly amountIncludingTax: bigint;
  readonly taxPercentage: bigint | null;
}

/** A line item as stored and returned: decimals with four fractional digits. */
export interface LineItemRecord {
  readonly quantity: number;
  readonly description: string;
  readonly id: string | null;
  readonly amount_excluding_tax: string;
  readonly tax_percentage: string | null;
  readonly tax_amount: string;
  readonly amount_including_tax: string;
}

/** Every field of a line item, in the contract's order. */
export const LINE_ITEM_FIELDS = Object.freeze([
  'quantity',
  'amount_excluding_tax',
  'tax_percentage',
  'description',
  'id',
  'tax_amount',
  'amount_including_tax',
] as const);

const LINE_FIELDS: ReadonlySet<string> = new Set(LINE_ITEM_FIELDS);

const DETAILS_FIELDS: ReadonlySet<string> = new Set(['line_items']);

const NON_NEGATIVE = { required: true, min: 0n, expected: 'zero or more' } as const;

/** The rules of a line's fields, as `readLine` applies them (and the OpenAPI document states them). */
export const LINE_ITEM_RULES = Object.freeze({
  quantity: { required: true, min: 1, max: LINE_ITEM_LIMITS.maxQuantity },
  description: { required: true, minLength: 1, maxLength: LINE_ITEM_LIMITS.maxDescriptionLength },
  id: { required: false, minLength: 1, maxLength: LINE_ITEM_LIMITS.maxIdLength },
  amount_excluding_tax: NON_NEGATIVE,
  tax_amount: NON_NEGATIVE,
  amount_including_tax: NON_NEGATIVE,
  tax_percentage: { required: false, min: 0n, max: wholeUnits(100), expected: 'from 0 to 100' },
} as const satisfies {
  readonly quantity: IntegerRule;
  readonly description: TextRule;
  readonly id: TextRule;
  readonly amount_excluding_tax: DecimalRule;
  readonly tax_amount: DecimalRule;
  readonly amount_including_tax: DecimalRule;
  readonly tax_percentage: DecimalRule;
});

function readLine(value: unknown, path: string, errors: FieldErrors): LineItem | undefined {
  if (!isJsonObject(value)) {
    errors.add(path, 'invalid_type', `Each line item must be an object, not ${jsonType(value)}.`);
    return undefined;
  }
  rejectUnknownFields(value, LINE_FIELDS, path, errors);
  const at = (name: string): string => memberPath(path, name);
  const rules = LINE_ITEM_RULES;
  const quantity = readInteger(value, 'quantity', at('quantity'), errors, rules.quantity);
  const description = readText(value, 'description', at('description'), errors, rules.description);
  const id = readText(value, 'id', at('id'), errors, rules.id);
  const excluding = readDecimal(value, 'amount_excluding_tax', at('amount_excluding_tax'), errors, rules.amount_excluding_tax);
  const tax = readDecimal(value, 'tax_amount', at('tax_amount'), errors, rules.tax_amount);
  const including = readDecimal(value, 'amount_including_tax', at('amount_including_tax'), errors, rules.amount_including_tax);
  const percentage = readDecimal(value, 'tax_percentage', at('tax_percentage'), errors, rules.tax_percentage);
  if (excluding !== undefined && tax !== undefined && including !== undefined && excluding + tax !== including) {
    errors.add(
      at('amount_including_tax'),
      'amount_mismatch',
      `amount_including_tax must equal amount_excluding_tax + tax_amount (${formatDecimal(excluding + tax)}), got ${formatDecimal(including)}.`,
    );
  }
  if (quantity === undefined || description === undefined || excluding === undefined || tax === undefined || including === undefined) {
    return undefined;
  }
  if (errors.has(path)) return undefined;
  return {
    quantity,
    description,
    id: id ?? null,
    amountExcludingTax: excluding,
    taxAmount: tax,
    amountIncludingTax: including,
    taxPercentage: percentage ?? null,
  };
}

/**
 * Reads `payment_details` and checks its lines against `amount` (when `amount` is valid).
 * Returns the lines, `null` when `payment_details` is absent, or `undefined` when invalid.
 */
export function readPaymentDetails(
  body: JsonObject,
  amount: bigint | undefined,
  errors: FieldErrors,
): readonly LineItem[] | null | undefined {
  const value = member(body, 'payment_details', 'payment_details', errors, false);
  if (value === undefined) return null;
  if (!isJsonObject(value)) {
    errors.add('payment_details', 'invalid_type', `payment_details must be an object, not ${jsonType(value)}.`);
    return undefined;
  }
  rejectUnknownFields(value, DETAILS_FIELDS, 'payment_details', errors);
  const path = 'payment_details.line_items';
  const list = member(value, 'line_items', path, errors, true);
  if (list === undefined) return undefined;
  if (!Array.isArray(list)) {
    errors.add(path, 'invalid_type', `line_items must be an array, not ${jsonType(list)}.`);
    return undefined;
  }
  if (list.length === 0 || list.length > LINE_ITEM_LIMITS.maxItems) {
    errors.add(path, 'invalid_count', `line_items must hold 1 to ${LINE_ITEM_LIMITS.maxItems} lines, got ${list.length}.`);
    return undefined;
  }
  const lines = list.map((item, index) => readLine(item, indexPath(path, index), errors));
  const totals = list.map((item) => (isJsonObject(item) ? totalOf(item) : undefined));
  if (amount !== undefined && totals.every((total): total is bigint => total !== undefined)) {
    const sum = totals.reduce((left, right) => left + right, 0n);
    if (sum !== amount) {
      errors.add(
        path,
        'amount_mismatch',
        `The lines' amount_including_tax add up to ${formatDecimal(sum)}, not to amount (${formatDecimal(amount)}).`,
      );
    }
  }
  return lines.every((line): line is LineItem => line !== undefined) ? lines : undefined;
}

/** A line's `amount_including_tax` when it is a valid amount, for the sum check. */
function totalOf(item: JsonObject): bigint | undefined {
  const value = item.amount_including_tax;
  if (typeof value !== 'string') return undefined;
  const parsed = parseDecimal(value);
  return parsed.ok && parsed.units >= 0n ? parsed.units : undefined;
}

/** A line as stored and returned. */
export function lineItemRecord(line: LineItem): LineItemRecord {
  return {
    quantity: line.quantity,
    description: line.description,
    id: line.id,
    amount_excluding_tax: formatDecimal(line.amountExcludingTax),
    tax_percentage: line.taxPercentage === null ? null : formatDecimal(line.taxPercentage),
    tax_amount: formatDecimal(line.taxAmount),
    amount_including_tax: formatDecimal(line.amountIncludingTax),
  };
}
