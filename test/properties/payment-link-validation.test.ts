/**
 * POST /payment-links/ never accepts a body that breaks a rule of the payment-link handler, as properties: an
 * arbitrary of valid bodies (each one shown to be accepted with 201), then each rule broken alone
 * on such a body, which must be refused with 400 and an `errors` entry naming the field, with
 * nothing stored: no link, no shopper, no idempotency record (the same key then creates the valid
 * body's link). Arbitrary JSON, nested as deep as the body limit allows, is refused and never throws.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, test } from 'vitest';
import type { AuthContext } from '../../src/index.js';
import {
  DEFAULT_MAX_BODY_BYTES,
  FRACTION_DIGITS,
  ISO_4217_CODES,
  InMemoryDirectory,
  InMemoryPaymentLinkStore,
  LINE_ITEM_LIMITS,
  LINK_LIMITS,
  MAX_INTEGER_DIGITS,
  META_LIMITS,
  type PaymentLink,
  type TenantSeed,
  formatDecimal,
  isPaymentCurrency,
} from '../../src/payment-links/index.js';
import { NOW, TENANT_A, TENANT_B, fieldErrors, jsonRequest, makeHandler, useCallers } from '../payment-links/support.js';

const callers = useCallers();
let auth: AuthContext;

beforeAll(async () => {
  auth = await callers.auth();
});

/** Tenant A has cardiology and radiology; oncology exists only in tenant B. */
const SEEDS: readonly TenantSeed[] = [
  {
    tenant: TENANT_A,
    stores: [{ id: '5a1d0f8e-8d3c-4c55-9a55-0f7a3c1b0a01' }, { id: '5a1d0f8e-8d3c-4c55-9a55-0f7a3c1b0a02' }],
    departments: [{ ref: 'cardiology' }, { ref: 'radiology', store: '5a1d0f8e-8d3c-4c55-9a55-0f7a3c1b0a02' }],
    shoppers: [{ ref: 'c-100' }],
    paymentMethods: { allowed: ['mc', 'visa'], blocked: [] },
  },
  { tenant: TENANT_B, stores: [{ id: '5a1d0f8e-8d3c-4c55-9a55-0f7a3c1b0b01' }], departments: [{ ref: 'oncology' }] },
];

type Body = Record<string, unknown>;

/** A handler with its own store and directory, on the frozen clock. */
function freshHandler() {
  const store = new InMemoryPaymentLinkStore();
  const directory = new InMemoryDirectory(SEEDS);
  return { handler: makeHandler({ store, directory }), store, directory };
}

// ---------------------------------------------------------------------------------------------
// Valid bodies

const NAME_CHARS = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.'];
const LOWER = [...'abcdefghijklmnopqrstuvwxyz'];
const DIGITS = [...'0123456789'];
const MAX_UNITS = 10n ** BigInt(MAX_INTEGER_DIGITS + FRACTION_DIGITS) - 1n;
const PAYABLE = ISO_4217_CODES.filter(isPaymentCurrency);
const FIELDS = [
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
];
const LINE_FIELDS = ['quantity', 'amount_excluding_tax', 'tax_percentage', 'description', 'id', 'tax_amount', 'amount_including_tax'];
const RESERVED_META_KEYS = ['__proto__', 'constructor', 'prototype'];

const chars = (alphabet: readonly string[], minLength: number, maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...alphabet), minLength, maxLength });
const namePart = chars(NAME_CHARS, 1, 12);

/** `units` as a client may write it: 0 to 4 fractional digits, trailing zeros dropped where exact. */
function written(units: bigint, fractionDigits: number): string {
  const [whole = '', fraction = ''] = formatDecimal(units).split('.');
  let kept = fraction;
  while (kept.length > fractionDigits && kept.endsWith('0')) kept = kept.slice(0, -1);
  return kept === '' ? whole : `${whole}.${kept}`;
}

/** The amount a decimal string stands for, read from its digits with BigInt. */
function unitsOf(text: string): bigint {
  const fraction = text.split('.')[1] ?? '';
  return BigInt(text.replace('.', '')) * 10n ** BigInt(FRACTION_DIGITS - fraction.length);
}

/** Where a field error is reported: `parent.name`, or `parent["odd name"]` for a name that is not an identifier. */
function pathOf(parent: string, name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return `${parent}[${JSON.stringify(name)}]`;
  return parent === '' ? name : `${parent}.${name}`;
}

const fractionDigits = fc.integer({ min: 0, max: FRACTION_DIGITS });
const positiveAmount = fc.oneof(
  fc.bigInt({ min: 1n, max: 10n ** 8n }),
  fc.bigInt({ min: 1n, max: MAX_UNITS }),
  fc.constantFrom(1n, MAX_UNITS),
);

const email = fc
  .tuple(
    chars([...LOWER, ...DIGITS, '.', '_', '+', '-', 'ø'], 1, 20),
    fc.array(chars([...LOWER, ...DIGITS, '-'], 1, 15), { minLength: 1, maxLength: 3 }),
    chars(LOWER, 2, 6),
  )
  .map(([local, labels, top]) => `${local}@${labels.join('.')}.${top}`);
const phone = fc.tuple(fc.constantFrom(...'123456789'), chars(DIGITS, 6, 14)).map(([first, rest]) => `+${first}${rest}`);
const locale = fc
  .tuple(chars(LOWER, 2, 2), chars([...'ABCDEFGHIJKLMNOPQRSTUVWXYZ'], 2, 2))
  .map(([language, region]) => `${language}-${region}`);
const text = (maxLength: number) =>
  fc.oneof(
    fc.string({ maxLength: Math.min(maxLength, 80) }),
    // Any code point but U+0000, which no stored text holds (refused: see the rule below).
    fc.string({ unit: 'binary', maxLength: Math.floor(Math.min(maxLength, 200) / 2) }).map((value) => value.replaceAll('\u0000', '\u0001')),
    fc.constant('x'.repeat(maxLength)),
  );
const metaKey = fc.string({ minLength: 1, maxLength: META_LIMITS.maxKeyLength }).filter((key) => !RESERVED_META_KEYS.includes(key));
const meta = fc.oneof(
  fc.dictionary(metaKey, text(META_LIMITS.maxValueLength), { maxKeys: 5 }),
  fc.dictionary(metaKey, fc.string({ maxLength: 8 }), {
    minKeys: META_LIMITS.maxEntries,
    maxKeys: META_LIMITS.maxEntries,
  }),
);

interface Line {
  readonly excluding: bigint;
  readonly tax: bigint;
  readonly digits: number;
  readonly quantity: number;
  readonly description: string;
  readonly id: string | undefined;
  readonly percentage: bigint | undefined;
}

/** Lines of up to 1e17 units each, so that any five add up within the fifteen integer digits. */
const line: fc.Arbitrary<Line> = fc.record({
  excluding: fc.oneof(fc.bigInt({ min: 0n, max: 10n ** 17n }), fc.bigInt({ min: 0n, max: 10n ** 7n })),
  tax: fc.oneof(fc.bigInt({ min: 0n, max: 10n ** 17n }), fc.bigInt({ min: 0n, max: 10n ** 6n })),
  digits: fractionDigits,
  quantity: fc.oneof(fc.integer({ min: 1, max: 10 }), fc.constantFrom(1, LINE_ITEM_LIMITS.maxQuantity)),
  description: fc.oneof(fc.string({ minLength: 1, maxLength: 40 }), fc.constant('d'.repeat(LINE_ITEM_LIMITS.maxDescriptionLength))),
  id: fc.option(fc.oneof(fc.string({ minLength: 1, maxLength: 20 }), fc.constant('i'.repeat(LINE_ITEM_LIMITS.maxIdLength))), {
    nil: undefined,
  }),
  percentage: fc.option(fc.oneof(fc.bigInt({ min: 0n, max: 1_000_000n }), fc.constantFrom(0n, 250_000n, 1_000_000n)), {
    nil: undefined,
  }),
});
const lines = fc.array(line, { minLength: 1, maxLength: 5 }).filter((list) => list.some((item) => item.excluding + item.tax > 0n));

function lineItem(item: Line): Body {
  return {
    quantity: item.quantity,
    description: item.description,
    ...(item.id === undefined ? {} : { id: item.id }),
    amount_excluding_tax: written(item.excluding, item.digits),
    ...(item.percentage === undefined ? {} : { tax_percentage: written(item.percentage, item.digits) }),
    tax_amount: written(item.tax, item.digits),
    amount_including_tax: written(item.excluding + item.tax, item.digits),
  };
}

/** A valid body and what its link must hold. */
interface Valid {
  readonly body: Body;
  readonly amount: bigint;
  readonly duration: number;
}

/** An optional field: absent, `null` (which counts as absent) or a value. */
const optional = <T>(value: fc.Arbitrary<T>) => fc.oneof(fc.constant(undefined), fc.constant(null), value);

const valid: fc.Arbitrary<Valid> = fc
  .record({
    amount: positiveAmount,
    amountDigits: fractionDigits,
    lines: fc.option(lines, { nil: undefined }),
    currency: fc.constantFrom(...PAYABLE),
    department: fc.constantFrom('cardiology', 'radiology'),
    shopper: fc.oneof(fc.constant('c-100'), namePart),
    contact: fc.oneof(
      fc.record({ email, phone: fc.constantFrom(undefined, null) }),
      fc.record({ email: fc.constantFrom(undefined, null), phone }),
      fc.record({ email, phone }),
    ),
    tokenize: optional(fc.constantFrom('no', 'yes')),
    duration: optional(
      fc.oneof(
        fc.integer({ min: LINK_LIMITS.minDuration, max: LINK_LIMITS.maxDuration }),
        fc.constantFrom(LINK_LIMITS.minDuration, LINK_LIMITS.maxDuration),
      ),
    ),
    locale: optional(locale),
    description: optional(text(LINK_LIMITS.maxDescriptionLength)),
    meta: optional(meta),
  })
  .map((parts) => {
    const amount = parts.lines === undefined ? parts.amount : parts.lines.reduce((sum, item) => sum + item.excluding + item.tax, 0n);
    const body: Body = {
      amount: written(amount, parts.amountDigits),
      currency: parts.currency,
      department: `//departments/${parts.department}`,
      shopper: `//customers/${parts.shopper}`,
      ...parts.contact,
      tokenize: parts.tokenize,
      duration: parts.duration,
      locale: parts.locale,
      description: parts.description,
      meta: parts.meta,
      ...(parts.lines === undefined ? {} : { payment_details: { line_items: parts.lines.map(lineItem) } }),
    };
    for (const name of Object.keys(body)) if (body[name] === undefined) delete body[name];
    return {
      body,
      amount,
      duration: typeof parts.duration === 'number' ? parts.duration : LINK_LIMITS.defaultDuration,
    };
  });

/** A valid body that has line items. */
const validWithLines = valid.filter(({ body }) => body.payment_details !== undefined);

// ---------------------------------------------------------------------------------------------
// One rule broken

/** A body breaking one rule, and the `errors` entry that must name it (`code` when it is certain). */
interface Broken {
  readonly valid: Valid;
  readonly body: Body;
  readonly field: string;
  readonly code?: string;
}

const broken = (base: Valid, changes: Body, field: string, code?: string): Broken => ({
  valid: base,
  body: { ...base.body, ...changes },
  field,
  code,
});

const removing = (base: Valid, names: readonly string[], field: string, code: string): Broken => {
  const body = { ...base.body };
  for (const name of names) delete body[name];
  return { valid: base, body, field, code };
};

/** The body with line `index` replaced by `change(line)`. */
function withLine(base: Valid, index: number, change: (item: Body) => Body): Body {
  const items = (base.body.payment_details as { line_items: Body[] }).line_items;
  const at = index % items.length;
  return {
    ...base.body,
    payment_details: { line_items: items.map((item, i) => (i === at ? change({ ...item }) : item)) },
  };
}

function lineIndex(base: Valid, index: number): number {
  return index % (base.body.payment_details as { line_items: Body[] }).line_items.length;
}

const linePath = (index: number, name?: string) => `payment_details.line_items[${index}]${name === undefined ? '' : `.${name}`}`;

const notADecimal = fc
  .tuple(
    positiveAmount,
    fc.constantFrom(
      'e2',
      'exp',
      '+',
      'leading-space',
      'trailing-space',
      'leading-zero-amount',
      'comma',
      'trailing-point',
      'bare-fraction',
      'underscore',
    ),
  )
  .map(([value, how]) => {
    const written4 = written(value, FRACTION_DIGITS);
    switch (how) {
      case 'e2':
        return `${written4}e2`;
      case 'exp':
        return '1E3';
      case '+':
        return `+${written4}`;
      case 'leading-space':
        return ` ${written4}`;
      case 'trailing-space':
        return `${written4} `;
      case 'leading-zero-amount':
        return `0${written4}`;
      case 'comma':
        return written(value, 0).includes('.') ? written4.replace('.', ',') : `${written4},5`;
      case 'trailing-point':
        return `${written(value, 0).split('.')[0]}.`;
      case 'bare-fraction':
        return `.${String(value % 10_000n).padStart(4, '0')}`;
      default:
        return `1_000${written4}`;
    }
  });

const anyIndex = fc.nat();
const nonString = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.array(fc.string(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.string(), { maxKeys: 2 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const tooManyDecimals = fc
  .tuple(fc.bigInt({ min: 0n, max: 10n ** 10n }), chars(DIGITS, FRACTION_DIGITS + 1, 8))
  .map(([whole, fraction]) => `${whole}.${fraction}`);

/** Each rule of the payment-link body with a way of breaking it on a valid body. */
const RULES: Record<string, fc.Arbitrary<Broken>> = {
  'amount with more than four fractional digits': fc
    .tuple(valid, tooManyDecimals)
    .map(([base, amount]) => broken(base, { amount }, 'amount', 'too_many_decimals')),
  'amount of zero': fc
    .tuple(valid, fractionDigits)
    .map(([base, digits]) => broken(base, { amount: written(0n, digits) }, 'amount', 'out_of_range')),
  'a negative amount': fc
    .tuple(valid, positiveAmount, fractionDigits)
    .map(([base, value, digits]) => broken(base, { amount: written(-value, digits) }, 'amount', 'out_of_range')),
  'amount of more than fifteen integer digits': fc
    .tuple(valid, fc.bigInt({ min: 10n ** 15n, max: 10n ** 22n }))
    .map(([base, whole]) => broken(base, { amount: `${whole}.00` }, 'amount', 'out_of_range')),
  'amount as a JSON number': fc
    .tuple(valid, fc.double({ min: 0.0001, max: 1e9, noNaN: true }))
    .map(([base, amount]) => broken(base, { amount }, 'amount', 'invalid_type')),
  'amount that is not a plain decimal string': fc
    .tuple(valid, notADecimal)
    .map(([base, amount]) => broken(base, { amount }, 'amount', 'invalid_format')),
  'currency that is not an ISO 4217 payment currency': fc
    .tuple(
      valid,
      chars([...'ABCDEFGHIJKLMNOPQRSTUVWXYZ'], 3, 3).filter((code) => !isPaymentCurrency(code)),
    )
    .map(([base, currency]) => broken(base, { currency }, 'currency', 'unknown_currency')),
  'currency that is not three upper-case letters': fc
    .tuple(
      valid,
      fc
        .oneof(
          fc.constantFrom(...PAYABLE).map((code) => code.toLowerCase()),
          fc.string({ maxLength: 3 }),
        )
        .filter((code) => !/^[A-Z]{3}$/.test(code)),
    )
    .map(([base, currency]) => broken(base, { currency }, 'currency', 'invalid_format')),
  'a required field missing': fc
    .tuple(valid, fc.constantFrom('amount', 'currency', 'department', 'shopper'))
    .map(([base, name]) => removing(base, [name], name, 'required')),
  'a required field null': fc
    .tuple(valid, fc.constantFrom('amount', 'currency', 'department', 'shopper'))
    .map(([base, name]) => broken(base, { [name]: null }, name, 'required')),
  'neither email nor phone': fc
    .tuple(valid, fc.boolean())
    .map(([base, asNull]) =>
      asNull
        ? broken(base, { email: null, phone: null }, 'email', 'email_or_phone_required')
        : removing(base, ['email', 'phone'], 'email', 'email_or_phone_required'),
    ),
  'an unknown field': fc
    .tuple(
      valid,
      fc
        .oneof(
          fc.string({ maxLength: 20 }),
          fc.constantFrom('__proto__', 'constructor', 'Amount', 'amount ', 'line_items', 'merchant_meta'),
        )
        .filter((name) => !FIELDS.includes(name)),
      fc.jsonValue({ maxDepth: 2 }),
    )
    .map(([base, name, value]) => broken(base, { [name]: value }, pathOf('', name), 'unknown_field')),
  'an unknown field in payment_details': fc
    .tuple(
      validWithLines,
      fc.string({ maxLength: 12 }).filter((name) => name !== 'line_items'),
    )
    .map(([base, name]) =>
      broken(
        base,
        { payment_details: { ...(base.body.payment_details as Body), [name]: 'x' } },
        pathOf('payment_details', name),
        'unknown_field',
      ),
    ),
  'an unknown field in a line item': fc
    .tuple(
      validWithLines,
      anyIndex,
      fc.string({ maxLength: 12 }).filter((name) => !LINE_FIELDS.includes(name)),
    )
    .map(([base, index, name]) => ({
      valid: base,
      body: withLine(base, index, (item) => ({ ...item, [name]: 1 })),
      field: pathOf(linePath(lineIndex(base, index)), name),
      code: 'unknown_field',
    })),
  'line items that do not add up to amount': fc
    .tuple(
      validWithLines,
      fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }).filter((offset) => offset !== 0n),
    )
    .filter(([base, offset]) => base.amount + offset > 0n)
    .map(([base, offset]) =>
      broken(base, { amount: written(base.amount + offset, FRACTION_DIGITS) }, 'payment_details.line_items', 'amount_mismatch'),
    ),
  'a line whose amount_including_tax is not amount_excluding_tax + tax_amount': fc
    .tuple(validWithLines, anyIndex, fc.bigInt({ min: 1n, max: 10n ** 9n }))
    .map(([base, index, extra]) => ({
      valid: base,
      body: withLine(base, index, (item) => ({
        ...item,
        tax_amount: formatDecimal(unitsOf(item.tax_amount as string) + extra),
      })),
      field: linePath(lineIndex(base, index), 'amount_including_tax'),
      code: 'amount_mismatch',
    })),
  'a line amount with more than four fractional digits': fc
    .tuple(
      validWithLines,
      anyIndex,
      fc.constantFrom('amount_excluding_tax', 'tax_amount', 'amount_including_tax', 'tax_percentage'),
      tooManyDecimals,
    )
    .map(([base, index, name, value]) => ({
      valid: base,
      body: withLine(base, index, (item) => ({ ...item, [name]: value })),
      field: linePath(lineIndex(base, index), name),
      code: 'too_many_decimals',
    })),
  'a negative line amount': fc
    .tuple(
      validWithLines,
      anyIndex,
      fc.constantFrom('amount_excluding_tax', 'tax_amount', 'amount_including_tax', 'tax_percentage'),
      positiveAmount,
    )
    .map(([base, index, name, value]) => ({
      valid: base,
      body: withLine(base, index, (item) => ({ ...item, [name]: written(-value, 2) })),
      field: linePath(lineIndex(base, index), name),
      code: 'out_of_range',
    })),
  'a tax_percentage above 100': fc
    .tuple(validWithLines, anyIndex, fc.bigInt({ min: 1_000_001n, max: 10n ** 12n }))
    .map(([base, index, value]) => ({
      valid: base,
      body: withLine(base, index, (item) => ({ ...item, tax_percentage: formatDecimal(value) })),
      field: linePath(lineIndex(base, index), 'tax_percentage'),
      code: 'out_of_range',
    })),
  'a line quantity that is not a whole number from 1 to 1 000 000': fc
    .tuple(
      validWithLines,
      anyIndex,
      fc.oneof(fc.constantFrom(0, -1, LINE_ITEM_LIMITS.maxQuantity + 1, 1.5, Number.MAX_SAFE_INTEGER), fc.constantFrom('1', null, true)),
    )
    .map(([base, index, quantity]) => ({
      valid: base,
      body: withLine(base, index, (item) => ({ ...item, quantity })),
      field: linePath(lineIndex(base, index), 'quantity'),
    })),
  'a line description empty, missing or too long': fc
    .tuple(validWithLines, anyIndex, fc.constantFrom('', null, 'd'.repeat(LINE_ITEM_LIMITS.maxDescriptionLength + 1), undefined))
    .map(([base, index, description]) => ({
      valid: base,
      body: withLine(base, index, (item) => {
        const changed = { ...item, description };
        if (description === undefined) delete changed.description;
        return changed;
      }),
      field: linePath(lineIndex(base, index), 'description'),
    })),
  'line_items empty or longer than 100': fc
    .tuple(validWithLines, fc.constantFrom(0, LINE_ITEM_LIMITS.maxItems + 1))
    .map(([base, count]) => {
      const items = Array.from({ length: count }, () => ({
        quantity: 1,
        description: 'x',
        amount_excluding_tax: '0',
        tax_amount: '0',
        amount_including_tax: '0',
      }));
      return broken(base, { payment_details: { line_items: items } }, 'payment_details.line_items', 'invalid_count');
    }),
  'meta with more than 50 entries': fc
    .tuple(
      valid,
      fc.dictionary(metaKey, fc.string({ maxLength: 4 }), {
        minKeys: META_LIMITS.maxEntries + 1,
        maxKeys: META_LIMITS.maxEntries + 5,
      }),
    )
    .map(([base, entries]) => broken(base, { meta: entries }, 'meta', 'invalid_count')),
  'a meta key empty or longer than 40 characters': fc
    .tuple(valid, fc.oneof(fc.constant(''), fc.string({ minLength: META_LIMITS.maxKeyLength + 1, maxLength: 60 })))
    .map(([base, key]) => broken(base, { meta: Object.fromEntries([[key, 'v']]) }, pathOf('meta', key), 'invalid_length')),
  'a meta value longer than 500 characters': fc
    .tuple(valid, metaKey, fc.integer({ min: META_LIMITS.maxValueLength + 1, max: 2000 }))
    .map(([base, key, length]) =>
      broken(base, { meta: Object.fromEntries([[key, 'v'.repeat(length)]]) }, pathOf('meta', key), 'invalid_length'),
    ),
  'a meta value that is not a string': fc
    .tuple(valid, metaKey, fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 2 })))
    .map(([base, key, value]) => broken(base, { meta: Object.fromEntries([[key, value]]) }, pathOf('meta', key), 'invalid_type')),
  'a reserved meta key': fc.tuple(valid, fc.constantFrom(...RESERVED_META_KEYS)).map(([base, key]) =>
    broken(
      base,
      {
        meta: Object.fromEntries([
          ['order_id', 'A-1'],
          [key, 'x'],
        ]),
      },
      pathOf('meta', key),
      'reserved_key',
    ),
  ),
  'meta that is not an object': fc
    .tuple(valid, fc.oneof(fc.string(), fc.integer(), fc.array(fc.string(), { maxLength: 2 }), fc.boolean()))
    .map(([base, value]) => broken(base, { meta: value }, 'meta', 'invalid_type')),
  'a duration out of bounds or not whole minutes': fc
    .tuple(
      valid,
      fc.oneof(fc.integer({ max: 0 }), fc.integer({ min: LINK_LIMITS.maxDuration + 1 }), fc.constantFrom(1.5, 60.25, '60', true, [60])),
    )
    .map(([base, duration]) => broken(base, { duration }, 'duration')),
  'a malformed phone number': fc
    .tuple(valid, phone, fc.constantFrom('no-plus', 'leading-zero', 'space', 'dash', 'short', 'long', 'letter'))
    .map(([base, number, how]) => {
      const digits = number.slice(1);
      const bad = {
        'no-plus': digits,
        'leading-zero': `+0${digits}`,
        space: `${number.slice(0, 3)} ${number.slice(3)}`,
        dash: `${number.slice(0, 3)}-${number.slice(3)}`,
        short: number.slice(0, 7),
        long: `${number}${'1'.repeat(16 - digits.length)}`,
        letter: `${number}a`,
      }[how];
      return broken(base, { phone: bad }, 'phone');
    }),
  'a malformed e-mail address': fc
    .tuple(valid, email, fc.constantFrom('no-at', 'two-at', 'space', 'no-dot', 'empty-local', 'trailing-dot', 'too-long', 'control'))
    .map(([base, address, how]) => {
      const [local = '', domain = ''] = address.split('@');
      const bad = {
        'no-at': `${local}${domain}`,
        'two-at': `${local}@${local}@${domain}`,
        space: `${local} x@${domain}`,
        'no-dot': `${local}@${domain.replaceAll('.', '')}`,
        'empty-local': `@${domain}`,
        'trailing-dot': `${address}.`,
        'too-long': `${'a'.repeat(LINK_LIMITS.maxEmailLength)}@${domain}`,
        control: `${local}\u0007@${domain}`,
      }[how];
      return broken(base, { email: bad }, 'email');
    }),
  'a department of another tenant': valid.map((base) => broken(base, { department: '//departments/oncology' }, 'department', 'not_found')),
  'a department that does not exist': fc
    .tuple(
      valid,
      namePart.filter((name) => !['cardiology', 'radiology'].includes(name)),
    )
    .map(([base, name]) => broken(base, { department: `//departments/${name}` }, 'department', 'not_found')),
  'a department or shopper that is not a reference to its collection': fc
    .tuple(valid, fc.constantFrom('department', 'shopper'), fc.constantFrom('plain', 'other-collection', 'slash', 'empty', 'ern'))
    .map(([base, name, how]) => {
      const [own, other] = name === 'department' ? ['departments', 'customers'] : ['customers', 'departments'];
      const value = {
        plain: 'cardiology',
        'other-collection': `//${other}/cardiology`,
        slash: `//${own}/a/b`,
        empty: '',
        ern: 'ern:acme/tenants/t-1',
      }[how];
      return broken(base, { [name]: value }, name, 'invalid_format');
    }),
  'tokenize other than "no" or "yes"': fc
    .tuple(
      valid,
      fc.oneof(
        fc.string({ maxLength: 8 }).filter((value) => !['no', 'yes'].includes(value)),
        fc.constantFrom(true, false, 1),
      ),
    )
    .map(([base, tokenize]) => broken(base, { tokenize }, 'tokenize')),
  'a locale that is not <language>-<REGION>': fc
    .tuple(
      valid,
      fc
        .oneof(fc.constantFrom('da', 'da_DK', 'DA-dk', 'da-dk', 'dan-DK', 'da-DKK', ''), fc.string({ maxLength: 6 }))
        .filter((value) => !/^[a-z]{2}-[A-Z]{2}$/.test(value)),
    )
    .map(([base, value]) => broken(base, { locale: value }, 'locale')),
  'a description longer than 1000 characters': fc
    .tuple(valid, fc.integer({ min: LINK_LIMITS.maxDescriptionLength + 1, max: 3000 }))
    .map(([base, length]) => broken(base, { description: 'd'.repeat(length) }, 'description', 'invalid_length')),
  'a description or meta value holding U+0000 or a lone surrogate': fc
    .tuple(valid, fc.string({ maxLength: 10 }), fc.constantFrom('\u0000', '\ud800', '\udfff'), fc.string({ maxLength: 10 }), fc.boolean())
    .map(([base, before, bad, after, inMeta]) =>
      inMeta
        ? broken(base, { meta: { note: `${before}${bad}${after}` } }, 'meta.note', 'invalid_format')
        : broken(base, { description: `${before}${bad}${after}` }, 'description', 'invalid_format'),
    ),
  'a text field of another JSON type': fc
    .tuple(valid, fc.constantFrom('currency', 'email', 'phone', 'department', 'shopper', 'locale', 'description'), nonString)
    .map(([base, name, value]) => broken(base, { [name]: value }, name, 'invalid_type')),
};

describe('valid bodies', () => {
  test('every generated valid body is accepted with 201 and stored once, with its exact amount', async () => {
    await fc.assert(
      fc.asyncProperty(valid, async ({ body, amount, duration }) => {
        const { handler, store } = freshHandler();
        const response = await handler(jsonRequest(auth, body));
        expect(response.status, JSON.stringify(response.body)).toBe(201);
        const link = response.body as PaymentLink;
        expect(link.amount).toBe(formatDecimal(amount));
        expect(unitsOf(link.amount)).toBe(amount);
        expect(link.currency).toBe(body.currency);
        expect(link.meta).toEqual(JSON.parse(JSON.stringify(body.meta ?? {})));
        expect(link.expires).toBe(new Date(Math.floor(NOW / 1000) * 1000 + duration * 60_000).toISOString().replace('.000Z', 'Z'));
        expect(store.size).toBe(1);
      }),
      { numRuns: 150 },
    );
  });
});

describe('a body breaking one rule of the payment-link handler is refused with 400 naming the field, and nothing is stored', () => {
  test.each(Object.entries(RULES))('%s', async (_rule, arbitrary) => {
    await fc.assert(
      fc.asyncProperty(arbitrary, fc.uuid(), async ({ valid: base, body, field, code }, key) => {
        const { handler, store, directory } = freshHandler();
        const shoppers = directory.shoppers(TENANT_A).length;
        const response = await handler(jsonRequest(auth, body, { 'idempotency-key': key }));
        expect(response.status).toBe(400);
        const errors = fieldErrors(response);
        expect(errors.map((error) => error.field)).toContain(field);
        if (code !== undefined) expect(errors).toContainEqual({ field, code });
        expect(store.size).toBe(0);
        expect(directory.shoppers(TENANT_A)).toHaveLength(shoppers);
        // Nothing was recorded for the key either: the valid body sent with it now creates its link.
        const retried = await handler(jsonRequest(auth, base.body, { 'idempotency-key': key }));
        expect(retried.status).toBe(201);
        expect(store.size).toBe(1);
      }),
      { numRuns: 25 },
    );
  });
});

describe('arbitrary bodies', () => {
  test('known fields holding arbitrary JSON values are answered 201 or 400, storing a link only with 201', async () => {
    const field = fc.constantFrom(...FIELDS);
    const replacements = fc.array(fc.tuple(field, fc.jsonValue({ maxDepth: 3 })), { minLength: 1, maxLength: 4 });
    await fc.assert(
      fc.asyncProperty(valid, replacements, fc.boolean(), async (base, changes, withKey) => {
        const { handler, store } = freshHandler();
        const body = { ...base.body, ...Object.fromEntries(changes) };
        const response = await handler(jsonRequest(auth, body, withKey ? { 'idempotency-key': 'k-1' } : {}));
        expect([201, 400]).toContain(response.status);
        expect(store.size).toBe(response.status === 201 ? 1 : 0);
      }),
      { numRuns: 200 },
    );
  });

  test('JSON of any shape, nested as deep as the body limit allows, is refused with 400 and never throws', async () => {
    const shapes = fc.array(fc.constantFrom('[', '{"a":', '{"meta":', '{"__proto__":'), { minLength: 1, maxLength: 3 });
    const deep = fc.tuple(fc.integer({ min: 1, max: DEFAULT_MAX_BODY_BYTES }), shapes).map(([depth, pattern]) => {
      const levels = Math.min(depth, Math.floor((DEFAULT_MAX_BODY_BYTES - 64) / (Math.max(...pattern.map((shape) => shape.length)) + 1)));
      const open = Array.from({ length: levels }, (_, level) => pattern[level % pattern.length] ?? '[');
      return `${open.join('')}1${open
        .map((shape) => (shape === '[' ? ']' : '}'))
        .reverse()
        .join('')}`;
    });
    const json = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
      deep,
      deep.map((nested) => `{"amount":"1.00","meta":${nested}}`),
    );
    await fc.assert(
      fc.asyncProperty(json, fc.boolean(), async (text, withKey) => {
        const { handler, store } = freshHandler();
        const response = await handler(jsonRequest(auth, text, withKey ? { 'idempotency-key': 'k-1' } : {}));
        expect(response.status).toBe(400);
        expect(store.size).toBe(0);
      }),
      { numRuns: 100 },
    );
  });
});
