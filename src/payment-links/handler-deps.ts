/**
 * What `createPaymentLinkHandler` is given: storage, directory, clock, ids, the pay-page URL and
 * the notification hook, each checked once, at creation.
 */
import {
  capHint,
  checkRealm,
  MAX_IDEMPOTENCY_KEY_TTL_SECONDS,
  describeValue,
  functionOption,
  isLoopbackHost,
  methodsOption,
  numberOption,
  rejectUnknownOptions,
  optionNames,
  quote,
  withoutTrailingSlashes,
} from '../internal/index.js';
import type { Verifier } from '../index.js';
import { type Directory, InMemoryDirectory } from './directory.js';
import { type IdempotencyStore, InMemoryIdempotencyStore } from './idempotency-store.js';
import { type IdGenerator, randomIds } from './ids.js';
import type { NotificationTimeoutError } from './notification-timeout.js';
import type { PaymentLink } from './payment-link.js';
import { InMemoryPaymentLinkStore, type PaymentLinkStore } from './payment-link-store.js';
import { DEFAULT_MAX_BODY_BYTES } from './request-body.js';

/** What the notification hook receives for each new link. */
export interface LinkCreatedEvent {
  /** The owning tenant's ERN. */
  readonly tenant: string;
  /** The link as returned to the caller. */
  readonly link: PaymentLink;
  /** The link's `meta`: later transaction notifications carry it as `merchant_meta`. */
  readonly merchant_meta: Readonly<Record<string, string>>;
}

/** Dependencies and options of `createPaymentLinkHandler`. */
export interface PaymentLinkHandlerDeps {
  /**
   * Base URL of the pay-by-link page; a link's `payment_url` is `<payPageUrl>/<link code>`.
   * `https:` (or `http:` on a loopback host), no credentials, query or fragment (not even an
   * empty one: `…/l?`); a trailing `/` is dropped.
   */
  readonly payPageUrl: string;
  /**
   * Where links are stored.
   * @default new InMemoryPaymentLinkStore()
   */
  readonly store?: PaymentLinkStore | undefined;
  /**
   * Tenants' departments, stores, shoppers and payment methods.
   * @default new InMemoryDirectory() (no tenants: every department is `not_found`)
   */
  readonly directory?: Directory | undefined;
  /**
   * Where `Idempotency-Key` records are kept.
   * @default new InMemoryIdempotencyStore()
   */
  readonly idempotency?: IdempotencyStore | undefined;
  /**
   * The clock: milliseconds since the epoch; a fraction fills the microseconds of `sent`.
   * @default Date.now
   */
  readonly now?: (() => number) | undefined;
  /**
   * Where link ids, shopper ids and link codes come from.
   * @default crypto.randomUUID() and 192-bit random codes
   */
  readonly ids?: IdGenerator | undefined;
  /**
   * Called once per new link, after it is stored and before the 201 is sent (awaited, for at most
   * `notificationTimeout`). A failure does not undo the link; it goes to `onNotificationError`.
   * @default undefined
   */
  readonly onLinkCreated?: ((event: LinkCreatedEvent) => void | Promise<void>) | undefined;
  /**
   * Receives a failure of `onLinkCreated`. What it throws, or its promise's rejection if it is
   * `async`, is ignored: the link is stored, and its 201 is sent.
   * @default writes one line to console.error
   */
  readonly onNotificationError?: ((error: unknown, event: LinkCreatedEvent) => void) | undefined;
  /**
   * Milliseconds the 201 waits for `onLinkCreated` to settle; 1 to 60 000. Past it the 201 of the
   * stored link is sent anyway (a 5xx would make the client retry and create the link twice), and
   * a {@link NotificationTimeoutError} (`notification_timeout`) goes to `onNotificationError`; what
   * the hook does later is dropped.
   * @default 5000
   */
  readonly notificationTimeout?: number | undefined;
  /**
   * Seconds an `Idempotency-Key` is remembered, counted from its first request; 60 to 2 592 000 (30 days).
   * @default 86400 (24 h)
   */
  readonly idempotencyKeyTtl?: number | undefined;
  /**
   * Largest request body, in bytes; a larger one is 413. 1024 to 1 048 576.
   * @default 65536 (64 KiB)
   */
  readonly maxBodyBytes?: number | undefined;
  /**
   * The `Location` of a new link is this prefix followed by its id. Visible ASCII characters only
   * (percent-encode any other), without `"`, `<` or `>`.
   * @default '/payment-links/'
   */
  readonly locationPrefix?: string | undefined;
  /**
   * The `realm` of challenges (insufficient scope).
   * @default 'paygate'
   */
  readonly realm?: string | undefined;
  /**
   * The verifier's `reportRefusal` (pass `verifier.reportRefusal`): a token this handler refuses
   * for a missing scope (403 `insufficient_scope`) then reaches the verifier's `onEvent` as a
   * `verify_failure`, as an adapter's refusal does. `undefined` (as on a verifier without
   * `onEvent`) reports nothing.
   * @default undefined
   */
  readonly reportRefusal?: Verifier['reportRefusal'] | undefined;
}

/** {@link PaymentLinkHandlerDeps} with every default applied. */
export interface ResolvedDeps {
  readonly payPageUrl: string;
  readonly store: PaymentLinkStore;
  readonly directory: Directory;
  readonly idempotency: IdempotencyStore;
  readonly now: () => number;
  readonly ids: IdGenerator;
  readonly onLinkCreated: ((event: LinkCreatedEvent) => void | Promise<void>) | undefined;
  readonly onNotificationError: (error: unknown, event: LinkCreatedEvent) => void;
  /** Milliseconds. */
  readonly notificationTimeout: number;
  /** Milliseconds. */
  readonly idempotencyKeyTtl: number;
  readonly maxBodyBytes: number;
  readonly locationPrefix: string;
  readonly realm: string;
  readonly reportRefusal: Verifier['reportRefusal'];
}

const OWNER = 'createPaymentLinkHandler';

const KNOWN = optionNames<PaymentLinkHandlerDeps>({
  payPageUrl: true,
  store: true,
  directory: true,
  idempotency: true,
  now: true,
  ids: true,
  onLinkCreated: true,
  onNotificationError: true,
  notificationTimeout: true,
  idempotencyKeyTtl: true,
  maxBodyBytes: true,
  locationPrefix: true,
  realm: true,
  reportRefusal: true,
});

function fail(name: string, rule: string): TypeError {
  return new TypeError(`${OWNER}: ${name} ${rule}`);
}

/**
 * `payPageUrl`: `https:`, or `http:` on a loopback host (by the rule JWKS addresses follow), with
 * no credentials, query or fragment. A refusal names what was found, never a credential.
 */
function checkPayPageUrl(value: unknown): string {
  const rule = 'must be an https: URL (http: only on a loopback host) without credentials, query or fragment';
  if (typeof value !== 'string') throw fail('payPageUrl', `${rule}, got ${describeValue(value)}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw fail('payPageUrl', `${rule}, got ${quote(value)}, which is no URL`);
  }
  if (url.username !== '' || url.password !== '') {
    throw fail('payPageUrl', `${rule}, got a URL with credentials (not shown): remove them`);
  }
  if (
    !(url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname))) ||
    // `?` or `#` with nothing after it is an empty query or fragment: the link code would land there.
    url.href.includes('?') ||
    url.href.includes('#')
  ) {
    throw fail('payPageUrl', `${rule}, got ${quote(url.href)}`);
  }
  return withoutTrailingSlashes(url.href);
}

function checkObject<T>(name: string, value: unknown, methods: readonly string[], fallback: () => T): T {
  return value === undefined
    ? fallback()
    : methodsOption<T>(OWNER, name, value, methods, `an object with the methods ${methods.join(', ')}`);
}

function defaultNotificationError(error: unknown, event: LinkCreatedEvent): void {
  const message = capHint(error instanceof Error ? error.message : String(error));
  console.error(
    `paygate-auth/payment-links: onLinkCreated failed for link ${quote(event.link.id)}: ${message}; the link is stored, its notification lost`,
  );
}

/**
 * Checks `deps` and applies the defaults.
 * @throws {TypeError} naming the option at fault.
 */
export function resolveDeps(deps: PaymentLinkHandlerDeps): ResolvedDeps {
  if (typeof deps !== 'object' || deps === null)
    throw new TypeError(`${OWNER}: deps must be an object with at least payPageUrl, got ${describeValue(deps)}`);
  rejectUnknownOptions(OWNER, deps, KNOWN);
  const locationPrefix = deps.locationPrefix ?? '/payment-links/';
  // It starts the Location header of every 201: a character no header can carry would fail each
  // response after its link was stored.
  if (typeof locationPrefix !== 'string' || !/^[\x21\x23-\x3b\x3d\x3f-\x7e]+$/.test(locationPrefix)) {
    const found = typeof locationPrefix === 'string' ? quote(locationPrefix) : typeof locationPrefix;
    throw fail(
      'locationPrefix',
      `must be a non-empty URL path or URL of visible ASCII characters (percent-encode any other) without '"', '<' or '>', got ${found}`,
    );
  }
  return {
    payPageUrl: checkPayPageUrl(deps.payPageUrl),
    store: checkObject('store', deps.store, ['insert', 'get', 'getByCode', 'list'], () => new InMemoryPaymentLinkStore()),
    directory: checkObject(
      'directory',
      deps.directory,
      ['findDepartment', 'storeFor', 'resolveShopper', 'paymentMethods'],
      () => new InMemoryDirectory(),
    ),
    idempotency: checkObject('idempotency', deps.idempotency, ['claim', 'complete', 'release'], () => new InMemoryIdempotencyStore()),
    now: functionOption<() => number>(OWNER, 'now', deps.now) ?? Date.now,
    ids: checkObject('ids', deps.ids, ['uuid', 'linkCode'], () => randomIds),
    onLinkCreated: functionOption(OWNER, 'onLinkCreated', deps.onLinkCreated),
    onNotificationError: functionOption(OWNER, 'onNotificationError', deps.onNotificationError) ?? defaultNotificationError,
    notificationTimeout: numberOption(OWNER, 'notificationTimeout', deps.notificationTimeout, 5000, {
      min: 1,
      max: 60_000,
      integer: true,
      unit: 'milliseconds',
    }),
    idempotencyKeyTtl:
      numberOption(OWNER, 'idempotencyKeyTtl', deps.idempotencyKeyTtl, 86_400, {
        min: 60,
        max: MAX_IDEMPOTENCY_KEY_TTL_SECONDS,
        integer: true,
        unit: 'seconds',
      }) * 1000,
    maxBodyBytes: numberOption(OWNER, 'maxBodyBytes', deps.maxBodyBytes, DEFAULT_MAX_BODY_BYTES, {
      min: 1024,
      max: 1_048_576,
      integer: true,
      unit: 'bytes',
    }),
    locationPrefix,
    realm: checkRealm(deps.realm, `${OWNER}: realm`),
    reportRefusal: functionOption(OWNER, 'reportRefusal', deps.reportRefusal),
  };
}
