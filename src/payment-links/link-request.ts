/**
 * The body of `POST /payment-links/`, checked field by field. Every invalid field is recorded;
 * nothing is looked up or stored here.
 *
 * | field | rule |
 * |---|---|
 * | `amount` | required; decimal string, > 0, at most 4 fractional digits, at most 15 integer digits |
 * | `currency` | required; an ISO 4217 payment currency, upper case (`EUR`) |
 * | `department` | required; `//departments/<id>` |
 * | `shopper` | required; `//customers/<id>` |
 * | `email` | `email` or `phone` required; an address `local@domain.tld`, at most 254 characters |
 * | `phone` | `+` then 7 to 15 digits, the first not 0 (E.164, no spaces) |
 * | `tokenize` | `"no"` (default) or `"yes"` |
 * | `duration` | whole minutes, 1 to 525 600 (365 days); default 20 160 (14 days) |
 * | `locale` | `<language>-<REGION>`: two lower-case letters, `-`, two upper-case letters (`da-DK`) |
 * | `description` | at most 1000 characters |
 * | `meta` | see {@link META_LIMITS} |
 * | `payment_details` | `{ line_items: [...] }`, see {@link LINE_ITEM_LIMITS} |
 *
 * `null` counts as absent. Any other field is `unknown_field`.
 */
import { ErnError, MAX_NAME_PART_LENGTH, parseReference } from '../index.js';
import { quote } from '../internal/index.js';
import { isPaymentCurrency } from './currencies.js';
import type { FieldErrors } from './field-errors.js';
import {
  type DecimalRule,
  type IntegerRule,
  type JsonObject,
  type PatternRule,
  type TextRule,
  member,
  readDecimal,
  readInteger,
  readPatterned,
  readText,
  rejectUnknownFields,
} from './field-readers.js';
import { type LineItem, readPaymentDetails } from './line-items.js';
import { readMeta } from './meta.js';

/** Bounds and defaults of the link fields. */
export const LINK_LIMITS = Object.freeze({
  /** `duration` when none is given: 14 days, in minutes. */
  defaultDuration: 20_160,
  /** Shortest `duration`, in minutes. */
  minDuration: 1,
  /** Longest `duration`, in minutes (365 days). */
  maxDuration: 525_600,
  /** Longest `description`, in characters. */
  maxDescriptionLength: 1000,
  /** Longest `email`, in characters (RFC 5321 path limit). */
  maxEmailLength: 254,
});

/** Allowed values of `tokenize`. */
export const TOKENIZE_VALUES = Object.freeze(['no', 'yes'] as const);

/** A value of `tokenize`. */
export type Tokenize = (typeof TOKENIZE_VALUES)[number];

/** A valid request body. Amounts in units of 1/10 000. */
export interface LinkRequest {
  readonly amount: bigint;
  readonly currency: string;
  /** The `<id>` of `//departments/<id>`. */
  readonly departmentRef: string;
  /** The `<id>` of `//customers/<id>`. */
  readonly customerRef: string;
  readonly email: string | null;
  readonly phone: string | null;
  readonly tokenize: Tokenize;
  /** Minutes. */
  readonly duration: number;
  readonly locale: string | null;
  readonly description: string | null;
  readonly meta: Readonly<Record<string, string>>;
  readonly lineItems: readonly LineItem[] | null;
}

/** Every field of the body, in the contract's order. */
export const LINK_FIELDS = Object.freeze([
  'amount',
  'currency',
  'meta',
  'email',
  'phone',
  'department',
  'shopper',
  'tokenize',
  'duration',
  'locale',
  'description',
  'payment_details',
] as const);

const FIELDS: ReadonlySet<string> = new Set(LINK_FIELDS);

/**
 * A pragmatic address check: one `@`, a dot in the domain, and no spaces, control characters,
 * lone surrogates or invisible format characters (zero-width spaces, bidirectional controls, soft hyphens: the
 * address shown would not be the one the link is sent to).
 */
const EMAIL = /^[^\s@\p{Cc}\p{Cf}\p{Cs}]+@[^\s@\p{Cc}\p{Cf}\p{Cs}.]+(?:\.[^\s@\p{Cc}\p{Cf}\p{Cs}.]+)+$/u;

/** Rules of a relative reference field: `//<collection>/<id>`. */
export interface ReferenceRule extends TextRule {
  readonly collection: 'departments' | 'customers';
}

/** `//<collection>/` and an id one character past the longest, whose fault the reference's parser then names. */
function referenceRule(collection: ReferenceRule['collection']): ReferenceRule {
  return { required: true, maxLength: 2 + collection.length + 1 + MAX_NAME_PART_LENGTH + 1, collection };
}

/**
 * The rules of the body's text fields, as the readers apply them (and the OpenAPI document of
 * `openapi.ts` states them).
 */
export const LINK_FIELD_RULES = Object.freeze({
  currency: {
    required: true,
    maxLength: 3,
    pattern: /^[A-Z]{3}$/,
    expected: 'three upper-case letters (ISO 4217), such as "EUR"',
  },
  department: referenceRule('departments'),
  shopper: referenceRule('customers'),
  email: {
    required: false,
    maxLength: LINK_LIMITS.maxEmailLength,
    pattern: EMAIL,
    expected: 'an e-mail address such as "jane@example.com"',
  },
  phone: {
    required: false,
    maxLength: 16,
    pattern: /^\+[1-9][0-9]{6,14}$/,
    expected: 'a telephone number in international form: "+", then 7 to 15 digits, the first not 0, no spaces',
  },
  tokenize: { required: false, maxLength: 16 },
  duration: { required: false, min: LINK_LIMITS.minDuration, max: LINK_LIMITS.maxDuration },
  locale: {
    required: false,
    maxLength: 5,
    pattern: /^[a-z]{2}-[A-Z]{2}$/,
    expected: 'a language tag "<language>-<REGION>": two lower-case letters, "-", two upper-case letters, such as "da-DK"',
  },
  description: { required: false, maxLength: LINK_LIMITS.maxDescriptionLength },
  amount: { required: true, min: 0n, exclusiveMin: true, expected: 'greater than 0' },
} as const satisfies {
  readonly currency: PatternRule;
  readonly department: ReferenceRule;
  readonly shopper: ReferenceRule;
  readonly email: PatternRule;
  readonly phone: PatternRule;
  readonly tokenize: TextRule;
  readonly duration: IntegerRule;
  readonly locale: PatternRule;
  readonly description: TextRule;
  readonly amount: DecimalRule;
});

function readReference(body: JsonObject, name: 'department' | 'shopper', errors: FieldErrors): string | undefined {
  const rule = LINK_FIELD_RULES[name];
  const value = readText(body, name, name, errors, rule);
  if (value === undefined) return undefined;
  try {
    return parseReference(value, rule.collection).id;
  } catch (error) {
    if (!(error instanceof ErnError)) throw error;
    errors.add(
      name,
      'invalid_format',
      `${name} must be "//${rule.collection}/<id>" (letters, digits, "-", "_", "." in the id), got ${quote(value)}.`,
    );
    return undefined;
  }
}

function readCurrency(body: JsonObject, errors: FieldErrors): string | undefined {
  const sent = body.currency;
  if (typeof sent === 'string' && sent.length === 3 && sent !== sent.toUpperCase() && isPaymentCurrency(sent.toUpperCase())) {
    const { expected } = LINK_FIELD_RULES.currency;
    errors.add(
      'currency',
      'invalid_format',
      `currency must be ${expected}, got ${quote(sent)}; did you mean ${quote(sent.toUpperCase())}?`,
    );
    return undefined;
  }
  const code = readPatterned(body, 'currency', 'currency', errors, LINK_FIELD_RULES.currency);
  if (code === undefined) return undefined;
  if (!isPaymentCurrency(code)) {
    errors.add(
      'currency',
      'unknown_currency',
      `currency must be an ISO 4217 code a payment can be made in (not XXX or XTS), got ${quote(code)}; send the code of the amount's currency, such as "EUR".`,
    );
    return undefined;
  }
  return code;
}

function readTokenize(body: JsonObject, errors: FieldErrors): Tokenize | undefined {
  const value = readText(body, 'tokenize', 'tokenize', errors, LINK_FIELD_RULES.tokenize);
  if (value === undefined) return member(body, 'tokenize', 'tokenize', errors, false) === undefined ? 'no' : undefined;
  if (!(TOKENIZE_VALUES as readonly string[]).includes(value)) {
    errors.add(
      'tokenize',
      'invalid_value',
      `tokenize must be one of ${TOKENIZE_VALUES.map((v) => `"${v}"`).join(', ')}, got ${quote(value)}.`,
    );
    return undefined;
  }
  return value as Tokenize;
}

function readContact(body: JsonObject, errors: FieldErrors): { email: string | null; phone: string | null } | undefined {
  const hasEmail = member(body, 'email', 'email', errors, false) !== undefined;
  const hasPhone = member(body, 'phone', 'phone', errors, false) !== undefined;
  if (!hasEmail && !hasPhone) {
    errors.add('email', 'email_or_phone_required', 'Give email, phone or both: the shopper is sent the link through them.');
    return undefined;
  }
  const email = readPatterned(body, 'email', 'email', errors, LINK_FIELD_RULES.email);
  const phone = readPatterned(body, 'phone', 'phone', errors, LINK_FIELD_RULES.phone);
  if ((hasEmail && email === undefined) || (hasPhone && phone === undefined)) return undefined;
  return { email: email ?? null, phone: phone ?? null };
}

/**
 * Checks a parsed body (a JSON object) and returns the request, or `undefined` when any field is
 * invalid (each recorded in `errors`).
 */
export function readLinkRequest(body: JsonObject, errors: FieldErrors): LinkRequest | undefined {
  const amount = readDecimal(body, 'amount', 'amount', errors, LINK_FIELD_RULES.amount);
  const currency = readCurrency(body, errors);
  const departmentRef = readReference(body, 'department', errors);
  const customerRef = readReference(body, 'shopper', errors);
  const contact = readContact(body, errors);
  const tokenize = readTokenize(body, errors);
  const duration = readInteger(body, 'duration', 'duration', errors, LINK_FIELD_RULES.duration);
  const durationGiven = member(body, 'duration', 'duration', errors, false) !== undefined;
  const locale = readPatterned(body, 'locale', 'locale', errors, LINK_FIELD_RULES.locale);
  const description = readText(body, 'description', 'description', errors, LINK_FIELD_RULES.description);
  const meta = readMeta(body, errors);
  const lineItems = readPaymentDetails(body, amount, errors);
  rejectUnknownFields(body, FIELDS, '', errors);
  if (
    errors.size > 0 ||
    amount === undefined ||
    currency === undefined ||
    departmentRef === undefined ||
    customerRef === undefined ||
    contact === undefined ||
    tokenize === undefined ||
    (durationGiven && duration === undefined) ||
    meta === undefined ||
    lineItems === undefined
  ) {
    return undefined;
  }
  return {
    amount,
    currency,
    departmentRef,
    customerRef,
    email: contact.email,
    phone: contact.phone,
    tokenize,
    duration: duration ?? LINK_LIMITS.defaultDuration,
    locale: locale ?? null,
    description: description ?? null,
    meta,
    lineItems,
  };
}
