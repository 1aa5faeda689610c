/**
 * `GET /payment-links/:id`: a link of the caller's tenant, where a new link's `Location` points.
 * Another tenant's link is 404, as if it did not exist.
 */
import type { Verifier } from '../index.js';
import { checkRealm, describeHolder, functionOption, optionNames, quote, rejectUnknownOptions } from '../internal/index.js';
import { LINK_SCOPE, checkCaller } from './caller.js';
import { PaymentLinkError, problemResponse } from './errors.js';
import type { Handler, HandlerResponse } from './handler-request.js';
import { isUuid } from './ids.js';
import { type StoredPaymentLink, toPaymentLink } from './payment-link.js';
import type { PaymentLinkStore } from './payment-link-store.js';
import { StorageUnavailableError, storageUnavailable } from './storage-unavailable.js';

/** The members of {@link GetPaymentLinkHandlerOptions}: any other is refused, naming the nearest. */
const GET_PAYMENT_LINK_HANDLER_OPTION_NAMES = optionNames<GetPaymentLinkHandlerOptions>({ store: true, realm: true, reportRefusal: true });

/** Options of {@link createGetPaymentLinkHandler}. */
export interface GetPaymentLinkHandlerOptions {
  /** The store the links were created in (`createPaymentLinkHandler(...).store`). */
  readonly store: PaymentLinkStore;
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

/**
 * `link` when it is the link `id` of `tenant`, as the store was asked for: a row written by hand may
 * hold another tenant's link, another link, or none, under this id and tenant.
 * @throws {Error} naming what the record holds: nothing this package stores.
 */
function checkRecord(link: StoredPaymentLink, tenant: string, id: string): StoredPaymentLink {
  const record: { readonly id?: unknown; readonly tenant?: unknown } = typeof link === 'object' && link !== null ? link : {};
  const sameId = typeof record.id === 'string' && record.id.toLowerCase() === id.toLowerCase();
  if (sameId && record.tenant === tenant) return link;
  const shown = (value: unknown): string => (typeof value === 'string' ? quote(value) : 'none');
  throw new Error(
    `createGetPaymentLinkHandler: the store's record of link ${quote(id)} of tenant ${quote(tenant)} holds link ` +
      `${shown(record.id)} of tenant ${shown(record.tenant)}, so it is not sent: was the row written by hand? ` +
      'Delete or correct it.',
  );
}

/**
 * Creates the `GET /payment-links/:id` handler; it reads `request.params.id`. Needs
 * `pay:processPayments` and a private tenant.
 * @throws {TypeError} naming the option at fault.
 */
export function createGetPaymentLinkHandler(options: GetPaymentLinkHandlerOptions): Handler {
  rejectUnknownOptions('createGetPaymentLinkHandler', options, GET_PAYMENT_LINK_HANDLER_OPTION_NAMES);
  const store = options?.store;
  if (typeof store?.get !== 'function')
    throw new TypeError(
      `createGetPaymentLinkHandler: store must be a PaymentLinkStore (with a get method), got ${describeHolder(store, 'get')}`,
    );
  const policy = {
    requiredScopes: LINK_SCOPE,
    allowPublicTenant: false,
    realm: checkRealm(options.realm, 'createGetPaymentLinkHandler: realm'),
    reportRefusal: functionOption<Verifier['reportRefusal']>('createGetPaymentLinkHandler', 'reportRefusal', options.reportRefusal),
  } as const;
  return async (request): Promise<HandlerResponse> => {
    const caller = checkCaller(request.auth, policy);
    if (!caller.ok) return caller.response;
    const id = request.params?.id;
    let link: StoredPaymentLink | null;
    try {
      link = isUuid(id) ? await store.get(caller.auth.tenant.ern, id) : null;
    } catch (error) {
      if (error instanceof StorageUnavailableError) return problemResponse(storageUnavailable(error));
      throw error;
    }
    if (link === null || !isUuid(id)) {
      // The same words for another tenant's link as for none: a 404 must not tell them apart.
      const found = typeof id === 'string' ? quote(id) : 'no id';
      return problemResponse(
        new PaymentLinkError(
          'payment_link_not_found',
          `No payment link of this tenant has this id, got ${found}; use the id of a link this tenant created (its Location).`,
        ),
      );
    }
    return {
      status: 200,
      headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
      body: toPaymentLink(checkRecord(link, caller.auth.tenant.ern, id)),
    };
  };
}
