/**
 * A payment link: the fields returned on creation (CONTRACT §2.3), and the record a store keeps.
 */
import type { LineItemRecord } from './line-items.js';
import type { Tokenize } from './link-request.js';

/** The states of a link. A new link is `active`. */
export const PAYMENT_LINK_STATUSES = Object.freeze(['active'] as const);

/** A state of a link. */
export type PaymentLinkStatus = (typeof PAYMENT_LINK_STATUSES)[number];

/** A payment link as returned by `POST /payment-links/` (201). */
export interface PaymentLink {
  /** UUID. */
  readonly id: string;
  /** Decimal string with exactly four fractional digits (`"12.5000"`). */
  readonly amount: string;
  /** The shopper's UUID in the tenant. */
  readonly shopper: string;
  /** The department's UUID. */
  readonly department: string;
  /** The UUID of the store chosen for the department. */
  readonly store: string;
  /** ISO 4217 code. */
  readonly currency: string;
  /** Text for the pay-by-link page; `null` when none was given. */
  readonly description: string | null;
  readonly email: string | null;
  readonly phone: string | null;
  /** ISO 8601 UTC, second precision, `Z`. */
  readonly expires: string;
  /** ISO 8601 UTC, microsecond precision, `Z`. */
  readonly sent: string;
  readonly status: PaymentLinkStatus;
  /** The `meta` given at creation (`{}` when none). */
  readonly meta: Readonly<Record<string, string>>;
  /** `<payPageUrl>/<link code>`. */
  readonly payment_url: string;
  /** Payment method codes from the tenant's settings; duplicates kept. */
  readonly allowed_payment_methods: readonly string[];
  /** Payment method codes from the tenant's settings; `[]` when none. */
  readonly blocked_payment_methods: readonly string[];
}

/** What a store keeps: the link, whose it is, and what the pay page needs beyond the response. */
export interface StoredPaymentLink extends PaymentLink {
  /** The owning tenant's ERN. Every read is scoped by it. */
  readonly tenant: string;
  /** The code at the end of `payment_url`. */
  readonly link_code: string;
  readonly tokenize: Tokenize;
  readonly locale: string | null;
  /** Minutes, as requested (or the default). */
  readonly duration: number;
  /** The request's customer reference id (`//customers/<id>`). */
  readonly customer_ref: string;
  readonly payment_details: { readonly line_items: readonly LineItemRecord[] } | null;
}

/** The fields of a {@link PaymentLink}, in the contract's order: every one is always present. */
export const PAYMENT_LINK_FIELDS = Object.freeze([
  'id',
  'amount',
  'shopper',
  'department',
  'store',
  'currency',
  'description',
  'email',
  'phone',
  'expires',
  'sent',
  'status',
  'meta',
  'payment_url',
  'allowed_payment_methods',
  'blocked_payment_methods',
] as const satisfies readonly (keyof PaymentLink)[]);

/** The response fields of a stored link, in the contract's order. */
export function toPaymentLink(link: StoredPaymentLink): PaymentLink {
  const result: Record<string, unknown> = {};
  for (const field of PAYMENT_LINK_FIELDS) result[field] = link[field];
  return result as unknown as PaymentLink;
}
