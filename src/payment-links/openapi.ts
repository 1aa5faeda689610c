/**
 * The OpenAPI 3.1 document of the reference endpoints (`GET /info/`, `POST /payment-links/`,
 * `GET /payment-links/{id}`), built from the rules the handlers validate with: the field rules
 * and limits, the currencies, the error codes and their statuses, the scopes. A limit changed in
 * the handlers changes the document; nothing here restates one.
 *
 * What a schema cannot say is said in a description, and the handlers still check it: a member
 * repeated within one object, the department existing in the caller's tenant, the line items
 * adding up, and `tax_percentage` at most 100.
 */
import {
  AUTH_ERROR_CODES,
  AuthError,
  type AuthErrorCode,
  ConfigurationError,
  KNOWN_SCOPES,
  type KnownScope,
  SCOPES,
  toErrorResponse,
} from '../index.js';
import {
  deepFreeze,
  describeValue,
  NAME_PART_PATTERN,
  numberOption,
  PROBLEM_TYPE_BASE,
  STORABLE_TEXT_PATTERN,
  rejectUnknownOptions,
  optionNames,
} from '../internal/index.js';
import { LINK_SCOPE } from './caller.js';
import { ISO_4217_CODES, isPaymentCurrency } from './currencies.js';
import { FRACTION_DIGITS, decimalPattern } from './decimal.js';
import { PAYMENT_LINK_ERROR_CODES, type PaymentLinkErrorCode } from './errors.js';
import { FIELD_ERROR_CODES, MAX_LISTED_FIELD_ERRORS } from './field-errors.js';
import type { DecimalRule, IntegerRule, PatternRule, TextRule } from './field-readers.js';
import { IDEMPOTENCY_KEY_PATTERN, MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency-key.js';
import { LINE_ITEM_FIELDS, LINE_ITEM_LIMITS, LINE_ITEM_RULES } from './line-items.js';
import { LINK_FIELDS, LINK_FIELD_RULES, LINK_LIMITS, type ReferenceRule, TOKENIZE_VALUES } from './link-request.js';
import { META_LIMITS, RESERVED_META_KEYS } from './meta.js';
import { PAYMENT_LINK_FIELDS, PAYMENT_LINK_STATUSES } from './payment-link.js';
import { DEFAULT_MAX_BODY_BYTES } from './request-body.js';
import { MICROS_PATTERN, SECONDS_PATTERN } from './timestamps.js';

/** The members of {@link OpenApiDocumentOptions}: any other is refused, naming the nearest. */
const OPEN_API_DOCUMENT_OPTION_NAMES = optionNames<OpenApiDocumentOptions>({ servers: true, maxBodyBytes: true, version: true });

/** A JSON value, as the document is made of. */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [name: string]: JsonValue };

/** An OpenAPI 3.1 document: a JSON object, frozen. */
export interface OpenApiDocument {
  readonly openapi: '3.1.0';
  readonly info: { readonly title: string; readonly version: string; readonly description: string };
  readonly servers?: readonly { readonly url: string; readonly description?: string }[];
  readonly paths: { readonly [path: string]: JsonValue };
  readonly components: { readonly [section: string]: JsonValue };
  readonly [member: string]: JsonValue | undefined;
}

/** Options of {@link createOpenApiDocument}. */
export interface OpenApiDocumentOptions {
  /**
   * Where the endpoints are served (`servers`).
   * @default none: a client resolves the paths against the document's own address
   */
  readonly servers?: readonly { readonly url: string; readonly description?: string }[] | undefined;
  /**
   * The body limit the `POST /payment-links/` handler was given (`maxBodyBytes`), in bytes: the 413
   * answer names it.
   * @default 65536 (the handler's default)
   */
  readonly maxBodyBytes?: number | undefined;
  /**
   * `info.version`: the version of this description of the service.
   * @default '1'
   */
  readonly version?: string | undefined;
}

/** The operations described, by `operationId`. */
export type OpenApiOperationId = 'getInfo' | 'createPaymentLink' | 'getPaymentLink';

/** The name of the bearer security scheme in `components.securitySchemes`. */
export const SECURITY_SCHEME = 'bearer';

type Schema = { readonly [name: string]: JsonValue };

/** What each scope grants (the contract's words). */
const SCOPE_GRANTS = {
  'pay:processPayments':
    'Payment requests (online or point-of-sale), processing payments and refunds, viewing and deleting tokenized cards; creating and reading payment links.',
  'pay:chargeToken': 'Charges with payment methods tokenized for a shopper.',
  'pay:manageIntegration':
    'Full access to all tenant settings (payment methods, payout settings, stores, terminals), transactions, payouts and reports.',
  'hub:subscribe': 'Subscriptions in the notification hub.',
} as const satisfies Record<KnownScope, string>;

/** The codes of the reference handlers each operation can answer, besides the authentication failures. */
const OPERATION_CODES = {
  getInfo: [],
  createPaymentLink: [
    'invalid_idempotency_key',
    'unsupported_media_type',
    'payload_too_large',
    'invalid_json',
    'invalid_body',
    'validation_failed',
    'public_tenant_not_allowed',
    'idempotency_key_reused',
    'idempotency_key_in_use',
    'idempotency_unavailable',
    'storage_unavailable',
  ],
  getPaymentLink: ['public_tenant_not_allowed', 'payment_link_not_found', 'storage_unavailable'],
} as const satisfies Record<OpenApiOperationId, readonly PaymentLinkErrorCode[]>;

/** Codes whose answer carries `Retry-After`. */
const RETRY_AFTER_CODES: ReadonlySet<string> = new Set<AuthErrorCode | PaymentLinkErrorCode>([
  'jwks_unavailable',
  'idempotency_key_in_use',
  'idempotency_unavailable',
  'storage_unavailable',
]);

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** `null` counts as absent in a request: an optional member may be `null`. */
function orNull(schema: Schema): Schema {
  const { type, enum: values } = schema;
  if (Array.isArray(values)) return { ...schema, type: [type as string, 'null'], enum: [...values, null] };
  if (typeof type === 'string') return { ...schema, type: [type, 'null'] };
  return { anyOf: [schema, { type: 'null' }] };
}

function textSchema(rule: TextRule | PatternRule, description?: string): Schema {
  return {
    type: 'string',
    ...((rule.minLength ?? 0) > 0 ? { minLength: rule.minLength ?? 0 } : {}),
    maxLength: rule.maxLength,
    ...('pattern' in rule ? { pattern: rule.pattern.source, description: `${rule.expected}.` } : { pattern: STORABLE_TEXT_PATTERN }),
    ...(description === undefined ? {} : { description }),
  };
}

function integerSchema(rule: IntegerRule, description: string): Schema {
  return { type: 'integer', minimum: rule.min, maximum: rule.max, description };
}

/**
 * A decimal string as the handler reads it. The bounds a pattern can say (zero or more, greater
 * than zero) are in the pattern; an upper bound is in the description.
 */
function decimalSchema(rule: DecimalRule, description: string): Schema {
  if (rule.min !== 0n) throw new TypeError(`decimalSchema: only a lower bound of 0 can be described, not ${rule.min}`);
  return {
    type: 'string',
    pattern: decimalPattern({ positive: rule.exclusiveMin === true }),
    description: `${description} A decimal string with a point (never a JSON number), ${rule.expected}, at most ${FRACTION_DIGITS} fractional digits.`,
  };
}

function referenceSchema(rule: ReferenceRule, example: string): Schema {
  return {
    type: 'string',
    pattern: `^//${rule.collection}/${NAME_PART_PATTERN}$`,
    description: `A relative reference \`//${rule.collection}/<id>\`: the id of letters, digits, "-", "_" and ".".`,
    examples: [`//${rule.collection}/${example}`],
  };
}

function linkRequestSchema(): Schema {
  const rules = LINK_FIELD_RULES;
  const properties: Record<(typeof LINK_FIELDS)[number], Schema> = {
    amount: decimalSchema(rules.amount, 'The amount to pay, returned with exactly four fractional digits.'),
    currency: {
      type: 'string',
      enum: ISO_4217_CODES.filter(isPaymentCurrency),
      description: 'An ISO 4217 code a payment can be made in, upper case.',
    },
    meta: orNull(ref('Meta')),
    email: orNull(textSchema(rules.email)),
    phone: orNull(textSchema(rules.phone)),
    department: referenceSchema(rules.department, 'cardiology'),
    shopper: referenceSchema(rules.shopper, 'c-100'),
    tokenize: orNull({ type: 'string', enum: [...TOKENIZE_VALUES], default: TOKENIZE_VALUES[0] }),
    duration: orNull({
      ...integerSchema(rules.duration, 'Minutes the link stays usable.'),
      default: LINK_LIMITS.defaultDuration,
    }),
    locale: orNull(textSchema(rules.locale)),
    description: orNull(textSchema(rules.description, 'Text shown on the pay-by-link page.')),
    payment_details: orNull(ref('PaymentDetails')),
  };
  return {
    type: 'object',
    description:
      'A new payment link. Give `email`, `phone` or both. `null` counts as absent. A member repeated within one object is refused (`duplicate_field`), as is any field not listed (`unknown_field`).',
    required: LINK_FIELDS.filter((name) => name in rules && rules[name as keyof typeof rules].required),
    properties,
    additionalProperties: false,
    allOf: [
      {
        anyOf: [
          { type: 'object', required: ['email'], properties: { email: { type: 'string' } } },
          { type: 'object', required: ['phone'], properties: { phone: { type: 'string' } } },
        ],
      },
    ],
  };
}

function lineItemSchema(): Schema {
  const rules = LINE_ITEM_RULES;
  const properties: Record<(typeof LINE_ITEM_FIELDS)[number], Schema> = {
    quantity: integerSchema(rules.quantity, "Units, shown to the shopper; the amounts are the line's totals and are not multiplied by it."),
    amount_excluding_tax: decimalSchema(rules.amount_excluding_tax, "The line's amount before tax."),
    tax_percentage: orNull(decimalSchema(rules.tax_percentage, 'Shown, not recomputed.')),
    description: textSchema(rules.description, 'Item text.'),
    id: orNull(textSchema(rules.id, 'Item identifier, free form.')),
    tax_amount: decimalSchema(rules.tax_amount, "The line's tax."),
    amount_including_tax: decimalSchema(
      rules.amount_including_tax,
      "Must equal `amount_excluding_tax + tax_amount`; the lines' `amount_including_tax` must add up to the link's `amount` (`amount_mismatch`).",
    ),
  };
  return {
    type: 'object',
    required: LINE_ITEM_FIELDS.filter((name) => rules[name].required),
    properties,
    additionalProperties: false,
  };
}

function metaSchema(): Schema {
  return {
    type: 'object',
    description: "The caller's own string pairs, echoed in the link and carried as `merchant_meta` by later transaction notifications.",
    maxProperties: META_LIMITS.maxEntries,
    propertyNames: {
      minLength: 1,
      maxLength: META_LIMITS.maxKeyLength,
      pattern: STORABLE_TEXT_PATTERN,
      not: { enum: [...RESERVED_META_KEYS] },
    },
    additionalProperties: { type: 'string', maxLength: META_LIMITS.maxValueLength, pattern: STORABLE_TEXT_PATTERN },
  };
}

function paymentLinkSchema(): Schema {
  const uuid = (description: string): Schema => ({ type: 'string', format: 'uuid', description });
  const optionalText = { type: ['string', 'null'] };
  const properties: Record<(typeof PAYMENT_LINK_FIELDS)[number], Schema> = {
    id: uuid('The link.'),
    amount: {
      type: 'string',
      pattern: decimalPattern({ fixed: true, positive: true }),
      description: `With exactly ${FRACTION_DIGITS} fractional digits, whatever precision was sent.`,
    },
    shopper: uuid("The shopper's id in the tenant."),
    department: uuid("The department's id."),
    store: uuid('The store chosen for the department.'),
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    description: optionalText,
    email: optionalText,
    phone: optionalText,
    expires: { type: 'string', format: 'date-time', pattern: SECONDS_PATTERN, description: 'ISO 8601 UTC, to the second.' },
    sent: { type: 'string', format: 'date-time', pattern: MICROS_PATTERN, description: 'ISO 8601 UTC, to the microsecond.' },
    status: { type: 'string', enum: [...PAYMENT_LINK_STATUSES] },
    meta: { type: 'object', additionalProperties: { type: 'string' } },
    payment_url: { type: 'string', format: 'uri', description: 'The pay-by-link page: `<pay page URL>/<link code>`.' },
    allowed_payment_methods: {
      type: 'array',
      items: { type: 'string' },
      description: "Payment method codes from the tenant's settings; a code may appear more than once.",
    },
    blocked_payment_methods: { type: 'array', items: { type: 'string' } },
  };
  return { type: 'object', required: [...PAYMENT_LINK_FIELDS], properties, additionalProperties: false };
}

function infoSchema(): Schema {
  const tenantErn = `^ern:${NAME_PART_PATTERN}/tenants/${NAME_PART_PATTERN}$`;
  return {
    type: 'object',
    description: 'What the gateway understood of the token.',
    required: ['tenant_ern', 'tenant_id', 'public_tenant', 'tenant_name', 'product', 'issuer', 'audience', 'scopes', 'user_ern', 'expires'],
    properties: {
      tenant_ern: { type: 'string', pattern: tenantErn },
      tenant_id: { type: 'string' },
      public_tenant: { type: 'boolean', description: 'The product acts as itself.' },
      tenant_name: { type: ['string', 'null'] },
      product: { type: 'string' },
      issuer: { type: 'string', description: 'The registered issuer (`iss`).' },
      audience: { type: 'string', description: "The gateway audience the token's `aud` matched." },
      scopes: { type: 'array', items: { type: 'string' }, description: "The token's scopes, in its order." },
      user_ern: { type: ['string', 'null'] },
      expires: { type: 'string', format: 'date-time', pattern: SECONDS_PATTERN, description: "The token's expiry." },
    },
    additionalProperties: false,
  };
}

function problemSchema(): Schema {
  return {
    type: 'object',
    description: 'An RFC 9457 problem. Branch on `code`, never on `title` or `detail`.',
    required: ['type', 'title', 'status', 'detail', 'code'],
    properties: {
      type: { type: 'string', pattern: `^${PROBLEM_TYPE_BASE.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[a-z_]+$` },
      title: { type: 'string' },
      status: { type: 'integer' },
      detail: { type: 'string' },
      code: { type: 'string' },
      claim: { type: 'string', description: 'The claim at fault, when one is.' },
      hint: { type: 'string', description: 'What was compared; only where the gateway exposes hints.' },
      errors: {
        type: 'array',
        maxItems: MAX_LISTED_FIELD_ERRORS,
        items: ref('FieldError'),
        description: `The invalid fields (\`validation_failed\`), in the order found: the first ${MAX_LISTED_FIELD_ERRORS}; \`detail\` counts them all.`,
      },
    },
    additionalProperties: false,
  };
}

function fieldErrorSchema(): Schema {
  const codes = Object.keys(FIELD_ERROR_CODES);
  return {
    type: 'object',
    required: ['field', 'code', 'message'],
    properties: {
      field: { type: 'string', description: 'Where: `amount`, `meta.order_id`, `payment_details.line_items[2].tax_amount`.' },
      code: {
        type: 'string',
        enum: codes,
        description: Object.entries(FIELD_ERROR_CODES)
          .map(([code, meaning]) => `- \`${code}\`: ${meaning}`)
          .join('\n'),
      },
      message: { type: 'string' },
    },
    additionalProperties: false,
  };
}

/** One failure an operation can answer: its code, status and title, and the headers its answer carries. */
interface Failure {
  readonly code: string;
  readonly status: number;
  readonly title: string;
  readonly challenge: boolean;
  readonly retryAfter: boolean;
}

/** Every authentication failure, as `toErrorResponse` answers it, and the server's own faults (500). */
function authenticationFailures(): Failure[] {
  const failures = (Object.keys(AUTH_ERROR_CODES) as AuthErrorCode[]).map((code): Failure => {
    const { status, headers } = toErrorResponse(new AuthError(code, code));
    return {
      code,
      status,
      title: AUTH_ERROR_CODES[code].title,
      challenge: headers['www-authenticate'] !== undefined,
      retryAfter: RETRY_AFTER_CODES.has(code),
    };
  });
  for (const fault of [new ConfigurationError('misconfigured'), new Error('failed')]) {
    const { status, body } = toErrorResponse(fault);
    failures.push({ code: body.code, status, title: body.title, challenge: false, retryAfter: false });
  }
  return failures;
}

function handlerFailures(operation: OpenApiOperationId): Failure[] {
  const codes: readonly PaymentLinkErrorCode[] = OPERATION_CODES[operation];
  return codes.map((code) => ({
    code,
    ...PAYMENT_LINK_ERROR_CODES[code],
    challenge: false,
    retryAfter: RETRY_AFTER_CODES.has(code),
  }));
}

const HEADERS = {
  'WWW-Authenticate': (required: boolean, codes: readonly string[]) => ({
    required,
    description: `The RFC 6750 challenge${required ? '' : ` (with ${codes.map((code) => `\`${code}\``).join(', ')})`}: \`Bearer realm="…"\`, then \`error\`, \`error_description\` and, for \`insufficient_scope\`, the \`scope\` needed.`,
    schema: { type: 'string', pattern: '^Bearer realm="[^"]*"' },
  }),
  'Retry-After': (required: boolean, codes: readonly string[]) => ({
    required,
    description: `Seconds to wait before retrying${required ? '' : ` (with ${codes.map((code) => `\`${code}\``).join(', ')})`}.`,
    schema: { type: 'integer', minimum: 1 },
  }),
} as const;

const CACHE_CONTROL = { description: '`no-store`: answers about one caller are never cached.', schema: { type: 'string' } };

/** The problem answers of an operation, by status: each lists its codes, and the headers they carry. */
function problemResponses(operation: OpenApiOperationId, maxBodyBytes: number): Record<string, Schema> {
  const byStatus = new Map<number, Failure[]>();
  for (const failure of [...authenticationFailures(), ...handlerFailures(operation)]) {
    byStatus.set(failure.status, [...(byStatus.get(failure.status) ?? []), failure]);
  }
  const responses: Record<string, Schema> = {};
  for (const [status, failures] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers: Record<string, JsonValue> = { 'Cache-Control': CACHE_CONTROL };
    for (const [name, flag] of [
      ['WWW-Authenticate', 'challenge'],
      ['Retry-After', 'retryAfter'],
    ] as const) {
      const carrying = failures.filter((failure) => failure[flag]).map((failure) => failure.code);
      if (carrying.length > 0) headers[name] = HEADERS[name](carrying.length === failures.length, carrying);
    }
    const lines = failures.map(
      (failure) => `- \`${failure.code}\`: ${failure.title}${failure.code === 'payload_too_large' ? ` (over ${maxBodyBytes} bytes)` : ''}`,
    );
    responses[String(status)] = {
      description: lines.join('\n'),
      headers,
      content: {
        'application/problem+json': {
          schema: {
            allOf: [
              ref('Problem'),
              {
                type: 'object',
                properties: {
                  status: { type: 'integer', const: status },
                  code: { type: 'string', enum: failures.map((failure) => failure.code) },
                },
              },
            ],
          },
        },
      },
    };
  }
  return responses;
}

function jsonContent(schema: Schema): Schema {
  return { 'application/json': { schema } };
}

function security(requirement: 'any-known-scope' | KnownScope): JsonValue {
  if (requirement === 'any-known-scope') return KNOWN_SCOPES.map((scope) => ({ [SECURITY_SCHEME]: [scope] }));
  return [{ [SECURITY_SCHEME]: [requirement] }];
}

function operations(maxBodyBytes: number): OpenApiDocument['paths'] {
  return {
    '/info/': {
      get: {
        operationId: 'getInfo',
        summary: 'Confirm that authentication is configured',
        description: 'Any valid token with at least one of the four scopes gets what the gateway understood of it.',
        security: security('any-known-scope'),
        responses: {
          '200': {
            description: 'The token as the gateway understood it.',
            headers: { 'Cache-Control': CACHE_CONTROL },
            content: jsonContent(ref('Info')),
          },
          ...problemResponses('getInfo', maxBodyBytes),
        },
      },
    },
    '/payment-links/': {
      post: {
        operationId: 'createPaymentLink',
        summary: 'Create a payment link for a shopper',
        description: `For a private tenant only. Every invalid field is reported at once (400 \`validation_failed\`, the first ${MAX_LISTED_FIELD_ERRORS} listed), and nothing is stored then. With an \`Idempotency-Key\`, the same key and body answer the first 201 again, and create nothing.`,
        security: security(LINK_SCOPE),
        parameters: [
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            description: `1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters without \`"\`, \`,\` or \`\\\`, bare or quoted (a UUID is a good key). Remembered per tenant; the same key with another body is 409 \`idempotency_key_reused\`.`,
            schema: { type: 'string', pattern: IDEMPOTENCY_KEY_PATTERN },
          },
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: ref('LinkRequest') },
          },
        },
        responses: {
          '201': {
            description: 'The link, created (or, with `Idempotent-Replayed: true`, the first answer to this key and body).',
            headers: {
              Location: { required: true, description: 'Where the link can be read.', schema: { type: 'string' } },
              'Idempotent-Replayed': {
                required: false,
                description: '`true` when this answer is the first one replayed.',
                schema: { type: 'string', enum: ['true'] },
              },
              'Cache-Control': CACHE_CONTROL,
            },
            content: jsonContent(ref('PaymentLink')),
          },
          ...problemResponses('createPaymentLink', maxBodyBytes),
        },
      },
    },
    '/payment-links/{id}': {
      get: {
        operationId: 'getPaymentLink',
        summary: "Read a link of the caller's tenant",
        description: "Another tenant's link, or an id that is no UUID, is 404 as if it did not exist.",
        security: security(LINK_SCOPE),
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
        responses: {
          '200': { description: 'The link.', headers: { 'Cache-Control': CACHE_CONTROL }, content: jsonContent(ref('PaymentLink')) },
          ...problemResponses('getPaymentLink', maxBodyBytes),
        },
      },
    },
  };
}

function securityScheme(): Schema {
  const scopes = KNOWN_SCOPES.map((scope) => `- \`${scope}\`: ${SCOPE_GRANTS[scope]}`).join('\n');
  return {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: `An RS256 JWT signed by an issuer the gateway trusts for the tenant's product (\`tenant_ern\`), in \`Authorization: Bearer <token>\`. Its \`scope\` claim is space-delimited; the operations list the scopes they need (any one of a list of requirements). The scopes:\n${scopes}`,
  };
}

/**
 * The OpenAPI 3.1 document of `GET /info/`, `POST /payment-links/` and `GET /payment-links/{id}`,
 * as the reference handlers answer them behind an adapter: the bearer security scheme and each
 * operation's scopes, the request and response schemas, `Idempotency-Key`, and every problem
 * answer with its status, codes and headers. Frozen; serve it as JSON.
 * @throws {TypeError} naming the option at fault.
 *
 * @example
 * ```ts
 * const document = createOpenApiDocument();
 * app.get('/openapi.json', (req, res) => res.json(document));
 * ```
 */
export function createOpenApiDocument(options: OpenApiDocumentOptions = {}): OpenApiDocument {
  rejectUnknownOptions('createOpenApiDocument', options, OPEN_API_DOCUMENT_OPTION_NAMES);
  const maxBodyBytes = numberOption('createOpenApiDocument', 'maxBodyBytes', options.maxBodyBytes, DEFAULT_MAX_BODY_BYTES, {
    min: 1,
    max: Number.MAX_SAFE_INTEGER,
    integer: true,
    unit: 'bytes',
  });
  const version = options.version ?? '1';
  if (typeof version !== 'string' || version === '')
    throw new TypeError(`createOpenApiDocument: version must be a non-empty string such as "1", got ${describeValue(version)}`);
  const document: OpenApiDocument = {
    openapi: '3.1.0',
    info: {
      title: 'Payment gateway: authentication and payment links',
      version,
      description: `The reference endpoints of paygate-auth/payment-links. Every call carries a bearer JWT; the scopes are \`${Object.values(SCOPES).join('`, `')}\`. Failures are \`application/problem+json\` with a stable \`code\`.`,
    },
    ...(options.servers === undefined ? {} : { servers: options.servers.map((server) => ({ ...server })) }),
    paths: operations(maxBodyBytes),
    components: {
      securitySchemes: { [SECURITY_SCHEME]: securityScheme() },
      schemas: {
        LinkRequest: linkRequestSchema(),
        PaymentDetails: {
          type: 'object',
          required: ['line_items'],
          properties: {
            line_items: { type: 'array', minItems: 1, maxItems: LINE_ITEM_LIMITS.maxItems, items: ref('LineItem') },
          },
          additionalProperties: false,
        },
        LineItem: lineItemSchema(),
        Meta: metaSchema(),
        PaymentLink: paymentLinkSchema(),
        Info: infoSchema(),
        Problem: problemSchema(),
        FieldError: fieldErrorSchema(),
      },
    },
  };
  return deepFreeze(document);
}
