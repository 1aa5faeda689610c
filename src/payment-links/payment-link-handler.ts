/**
 * `POST /payment-links/`: creates a payment link for a shopper of the caller's tenant.
 *
 * Order of checks: the caller (500 without verification, 403 `insufficient_scope` without
 * `pay:processPayments`, 403 `public_tenant_not_allowed`), `Idempotency-Key` syntax (400),
 * `Content-Type` (415), size (413), JSON (400), fields (400 `validation_failed`, every invalid
 * field at once, before the idempotency and link stores are touched), idempotent replay or
 * conflict (409), the department's lookup (400), then the link is stored and 201 returned with
 * `Location`.
 *
 * Idempotency: only a 201 is recorded. A request refused for its fields records nothing, so the
 * client may correct it and retry with the same key. With a store that can (`insertClaiming`), a
 * new key is recorded together with the link, in one commit; a key that has a record already is
 * claimed first, as with any store.
 */
import { describeValue, ignoreRejection, quote } from '../internal/index.js';
import { parseReference } from '../index.js';
import { LINK_SCOPE, checkCaller } from './caller.js';
import { formatDecimal } from './decimal.js';
import type { Directory } from './directory.js';
import { PaymentLinkError, problemResponse } from './errors.js';
import { FieldErrors, MAX_LISTED_FIELD_ERRORS } from './field-errors.js';
import { type JsonObject, isJsonObject, jsonType } from './field-readers.js';
import type { Handler, HandlerRequest, HandlerResponse } from './handler-request.js';
import { type LinkCreatedEvent, type PaymentLinkHandlerDeps, type ResolvedDeps, resolveDeps } from './handler-deps.js';
import { type ClaimRequest, type ClaimResult, IdempotencyCapacityError, type Lease, type RecordedResponse } from './idempotency-store.js';
import { fingerprint, readIdempotencyKey } from './idempotency-key.js';
import { isUuid, newLinkCode, newUuid } from './ids.js';
import { lineItemRecord } from './line-items.js';
import { NotificationTimeoutError } from './notification-timeout.js';
import { type LinkRequest, readLinkRequest } from './link-request.js';
import { type StoredPaymentLink, toPaymentLink } from './payment-link.js';
import type { PaymentLinkStore } from './payment-link-store.js';
import { readJsonBody } from './request-body.js';
import { StorageUnavailableError, storageUnavailable } from './storage-unavailable.js';
import { epochMicros, formatMicros, formatSeconds } from './timestamps.js';

/** The `POST /payment-links/` handler, with the stores it uses (the defaults, when none were given). */
export interface PaymentLinkHandler extends Handler {
  readonly store: PaymentLinkStore;
  readonly directory: Directory;
}

const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store' } as const;

/** A created link: the response, and the event for the notification hook. */
interface Creation {
  readonly response: HandlerResponse;
  readonly event: LinkCreatedEvent | null;
}

function checkClock(now: () => number): number {
  const value = now();
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new TypeError(`createPaymentLinkHandler: now() must return milliseconds since the epoch, got ${describeValue(value)}`);
  }
  return value;
}

/** The department reference of the body when it parses, to look it up even when other fields are invalid. */
function departmentRefOf(body: JsonObject): string | undefined {
  try {
    return parseReference(body.department, 'departments').id;
  } catch {
    return undefined;
  }
}

function validationFailed(errors: FieldErrors): PaymentLinkError {
  const count = errors.size;
  const listed = count > MAX_LISTED_FIELD_ERRORS ? `the first ${MAX_LISTED_FIELD_ERRORS} are in errors` : 'see errors';
  return new PaymentLinkError('validation_failed', `${count} field${count === 1 ? ' is' : 's are'} invalid; ${listed}.`, {
    errors: errors.list(),
  });
}

async function buildLink(
  deps: ResolvedDeps,
  tenant: string,
  request: LinkRequest,
  resolved: { readonly departmentId: string; readonly storeId: string },
): Promise<StoredPaymentLink> {
  const now = checkClock(deps.now);
  const id = newUuid(deps.ids);
  // Drawn before the shopper is registered: a bad generator leaves nothing behind.
  const code = newLinkCode(deps.ids);
  const [shopper, methods] = await Promise.all([
    deps.directory.resolveShopper(tenant, request.customerRef, newUuid(deps.ids)),
    deps.directory.paymentMethods(tenant),
  ]);
  const sent = epochMicros(now);
  const sentSecond = Math.floor(sent / 1_000_000) * 1000;
  return {
    id,
    amount: formatDecimal(request.amount),
    shopper: shopper.id,
    department: resolved.departmentId,
    store: resolved.storeId,
    currency: request.currency,
    description: request.description,
    email: request.email,
    phone: request.phone,
    expires: formatSeconds(sentSecond + request.duration * 60_000),
    sent: formatMicros(sent),
    status: 'active',
    meta: request.meta,
    payment_url: `${deps.payPageUrl}/${code}`,
    allowed_payment_methods: [...methods.allowed],
    blocked_payment_methods: [...methods.blocked],
    tenant,
    link_code: code,
    tokenize: request.tokenize,
    locale: request.locale,
    duration: request.duration,
    customer_ref: request.customerRef,
    payment_details: request.lineItems === null ? null : { line_items: request.lineItems.map(lineItemRecord) },
  };
}

/**
 * The department named by the body and its store, looked up in `tenant` (read only) whenever the
 * reference parses, so that `not_found` is reported beside every other invalid field.
 */
async function resolveDepartment(
  directory: Directory,
  tenant: string,
  body: JsonObject,
  errors: FieldErrors,
): Promise<{ readonly departmentId: string; readonly storeId: string } | undefined> {
  const ref = departmentRefOf(body);
  if (ref === undefined) return undefined;
  const department = await directory.findDepartment(tenant, ref);
  if (department === null) {
    errors.add('department', 'not_found', `No department of this tenant has the id ${quote(ref)}; use the id of one of its departments.`);
    return undefined;
  }
  const store = await directory.storeFor(tenant, department);
  if (store === null) {
    errors.add(
      'department',
      'no_store',
      `No store takes payments for this department, got ${quote(ref)}; give the tenant a store, or use another department.`,
    );
    return undefined;
  }
  return { departmentId: department.id, storeId: store.id };
}

function recordOf(response: HandlerResponse): RecordedResponse {
  return { status: response.status, headers: response.headers, body: response.body };
}

/**
 * Stores `stored`, completing `lease` with `response` in the same step where the store can;
 * resolves whether it did (otherwise the link is stored and the lease still to complete).
 */
async function storeCompleting(deps: ResolvedDeps, stored: StoredPaymentLink, lease: Lease, response: HandlerResponse): Promise<boolean> {
  const outcome =
    deps.store.insertCompleting === undefined
      ? 'unsupported'
      : await deps.store.insertCompleting(stored, {
          idempotency: deps.idempotency,
          lease,
          response: recordOf(response),
        });
  if (outcome === 'stored') return true;
  if (outcome === 'lease_lost') {
    throw new PaymentLinkError(
      'idempotency_key_in_use',
      `This request outlived its hold on the Idempotency-Key, got ${quote(lease.key)}, and created nothing; retry to get the outcome.`,
      { retryAfter: 1 },
    );
  }
  await deps.store.insert(stored);
  return false;
}

/** A body whose fields are valid, read into a link request. */
interface CheckedBody {
  readonly body: JsonObject;
  readonly request: LinkRequest;
}

/**
 * Validates `body`'s fields before any storage is touched (the idempotency claim, the store): an
 * invalid body is 400 even while the database is down. The 400 names the department too when the
 * directory answers; when it cannot, the other fields are reported without it.
 */
async function checkBody(deps: ResolvedDeps, tenant: string, body: unknown): Promise<CheckedBody> {
  if (!isJsonObject(body)) {
    throw new PaymentLinkError('invalid_body', `The body must be a JSON object of the link's fields, got ${jsonType(body)}.`);
  }
  const errors = new FieldErrors();
  const request = readLinkRequest(body, errors);
  if (request !== undefined && errors.size === 0) return { body, request };
  try {
    await resolveDepartment(deps.directory, tenant, body, errors);
  } catch (error) {
    if (!(error instanceof StorageUnavailableError)) throw error;
  }
  throw validationFailed(errors);
}

/** A link ready to store: the record, the 201 and the event. */
interface Prepared extends Creation {
  readonly stored: StoredPaymentLink;
  readonly event: LinkCreatedEvent;
}

/** Builds the link of a department resolved already, with its 201 and event. */
async function prepare(
  deps: ResolvedDeps,
  tenant: string,
  request: LinkRequest,
  resolved: { readonly departmentId: string; readonly storeId: string },
): Promise<Prepared> {
  const stored = await buildLink(deps, tenant, request, resolved);
  const link = toPaymentLink(stored);
  const response = {
    status: 201,
    headers: { ...JSON_HEADERS, location: `${deps.locationPrefix}${link.id}` },
    body: link,
  };
  return { stored, response, event: { tenant, link, merchant_meta: link.meta } };
}

/**
 * Looks up the checked body's department and its store, stores the link; with a `lease`,
 * completes it in the same step where the store can (`completed`).
 */
async function create(
  deps: ResolvedDeps,
  tenant: string,
  checked: CheckedBody,
  lease?: Lease,
): Promise<Creation & { readonly completed: boolean }> {
  const { body, request } = checked;
  const errors = new FieldErrors();
  const resolved = await resolveDepartment(deps.directory, tenant, body, errors);
  if (resolved === undefined || errors.size > 0) throw validationFailed(errors);
  const { stored, response, event } = await prepare(deps, tenant, request, resolved);
  let completed = false;
  if (lease === undefined) await deps.store.insert(stored);
  else completed = await storeCompleting(deps, stored, lease, response);
  return { response, event, completed };
}

/**
 * The one-commit path, for a store that claims the key and stores the link in one step: the
 * department is looked up and the link built first, then the key is recorded completed together
 * with the link. `undefined` when that cannot be (the store cannot, the key has a record, the
 * department does not resolve): the caller then claims the key first, as ever, so a replay or a
 * conflict is still answered before the fields are judged.
 */
async function createClaiming(
  deps: ResolvedDeps,
  tenant: string,
  claim: Omit<ClaimRequest, 'now' | 'expiresAt'>,
  checked: CheckedBody,
): Promise<Creation | undefined> {
  if (deps.store.insertClaiming === undefined) return undefined;
  const resolved = await resolveDepartment(deps.directory, tenant, checked.body, new FieldErrors());
  if (resolved === undefined) return undefined;
  const prepared = await prepare(deps, tenant, checked.request, resolved);
  const now = checkClock(deps.now);
  const outcome = await deps.store.insertClaiming(prepared.stored, {
    idempotency: deps.idempotency,
    claim: { ...claim, now, expiresAt: now + deps.idempotencyKeyTtl },
    response: recordOf(prepared.response),
  });
  return outcome === 'stored' ? { response: prepared.response, event: prepared.event } : undefined;
}

/** A refusal as a creation without event. */
function refused(error: PaymentLinkError): Creation {
  return { response: problemResponse(error), event: null };
}

/**
 * The recorded 201 again, with the handler's own headers (its Location rebuilt from the link's
 * id): a store's record may have been written by hand, and its text must not reach a header.
 * @throws {Error} for a record that holds no 201 of a link: nothing this handler records.
 */
function replay(deps: ResolvedDeps, recorded: RecordedResponse): HandlerResponse {
  const id = (recorded.body as { readonly id?: unknown } | null | undefined)?.id;
  if (recorded.status !== 201 || typeof id !== 'string' || !isUuid(id)) {
    const found = `status ${quote(String(recorded.status))}, link id ${typeof id === 'string' ? quote(id) : 'none'}`;
    throw new Error(
      `createPaymentLinkHandler: the Idempotency-Key record holds no 201 of a link (${found}; expected status "201" and a UUID), ` +
        'so it is not replayed: was the record written by hand? Use a new key.',
    );
  }
  return {
    status: 201,
    headers: { ...JSON_HEADERS, location: `${deps.locationPrefix}${id}`, 'idempotent-replayed': 'true' },
    body: recorded.body,
  };
}

/** Runs `create` at most once per (tenant, key, body); replays, or refuses a reused key. */
async function createOnce(deps: ResolvedDeps, tenant: string, key: string, body: unknown): Promise<Creation> {
  const checked = await checkBody(deps, tenant, body);
  const print = await fingerprint(body);
  const claimed = await createClaiming(deps, tenant, { tenant, key, fingerprint: print }, checked);
  if (claimed !== undefined) return claimed;
  const now = checkClock(deps.now);
  let claim: ClaimResult;
  try {
    claim = await deps.idempotency.claim({
      tenant,
      key,
      fingerprint: print,
      now,
      expiresAt: now + deps.idempotencyKeyTtl,
    });
  } catch (error) {
    if (!(error instanceof IdempotencyCapacityError)) throw error;
    return refused(
      new PaymentLinkError('idempotency_unavailable', 'Too many idempotency keys are live; retry later.', {
        retryAfter: 60,
        cause: error,
      }),
    );
  }
  if (claim.state !== 'claimed') {
    if (claim.fingerprint !== print) {
      return refused(
        new PaymentLinkError(
          'idempotency_key_reused',
          `This Idempotency-Key was used with a different body, got ${quote(key)}; use a new key for a new request.`,
        ),
      );
    }
    if (claim.state === 'pending') {
      return refused(
        new PaymentLinkError(
          'idempotency_key_in_use',
          `A request with this Idempotency-Key is still being processed, got ${quote(key)}; retry after Retry-After to get its outcome.`,
          { retryAfter: 1 },
        ),
      );
    }
    return { response: replay(deps, claim.response), event: null };
  }
  let creation: Awaited<ReturnType<typeof create>>;
  try {
    creation = await create(deps, tenant, checked, claim.lease);
  } catch (error) {
    await deps.idempotency.release(claim.lease).catch(() => {
      // The store is failing too: the lease expires on its own and the key can be claimed again.
    });
    throw error;
  }
  // Stored but not yet completed: a failure from here on must not release the key of a stored link.
  if (!creation.completed) {
    try {
      await deps.idempotency.complete(claim.lease, recordOf(creation.response));
    } catch (error) {
      if (!(error instanceof StorageUnavailableError)) throw error;
      // The link is stored: its 201 is sent all the same, as past a failing onLinkCreated. A 503
      // would say nothing was written, and the client's retry would make a second link once the
      // key's lease ended. The key stays pending until then.
    }
  }
  return creation;
}

/**
 * Awaits `onLinkCreated` for at most `notificationTimeout`; a failure, or the bound passing
 * ({@link NotificationTimeoutError}), goes to `onNotificationError`. Never throws.
 */
async function notify(deps: ResolvedDeps, event: LinkCreatedEvent | null): Promise<void> {
  if (event === null || deps.onLinkCreated === undefined) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const notified = deps.onLinkCreated(event);
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new NotificationTimeoutError(deps.notificationTimeout)), deps.notificationTimeout);
    });
    // The race observes `notified`: its failure after the bound is dropped, never unhandled.
    await Promise.race([notified, late]);
  } catch (error) {
    try {
      ignoreRejection(deps.onNotificationError(error, event));
    } catch {
      // The link is stored: its 201 is sent all the same, or a client retrying without a key
      // would create it twice.
    }
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Creates the `POST /payment-links/` handler.
 * @throws {TypeError} naming the dependency or option at fault.
 *
 * @example
 * ```ts
 * const createLink = createPaymentLinkHandler({ payPageUrl: 'https://pay.example.com/l', directory });
 * // behind paygate-auth/express's auth(); the request stream is the body (no body parser)
 * app.post('/payment-links/', async (req, res, next) => {
 *   try {
 *     const { status, headers, body } = await createLink({ auth: req.auth, headers: req.headers, body: req });
 *     res.status(status).set(headers).send(JSON.stringify(body));
 *   } catch (error) {
 *     next(error);
 *   }
 * });
 * ```
 */
export function createPaymentLinkHandler(deps: PaymentLinkHandlerDeps): PaymentLinkHandler {
  const resolved = resolveDeps(deps);
  const policy = {
    requiredScopes: LINK_SCOPE,
    allowPublicTenant: false,
    realm: resolved.realm,
    reportRefusal: resolved.reportRefusal,
  } as const;
  const handler = async (request: HandlerRequest): Promise<HandlerResponse> => {
    const caller = checkCaller(request.auth, policy);
    if (!caller.ok) return caller.response;
    const tenant = caller.auth.tenant.ern;
    try {
      const key = readIdempotencyKey(request.headers);
      const body = await readJsonBody(request, resolved.maxBodyBytes);
      const creation =
        key === null
          ? await create(resolved, tenant, await checkBody(resolved, tenant, body))
          : await createOnce(resolved, tenant, key, body);
      await notify(resolved, creation.event);
      return creation.response;
    } catch (error) {
      if (error instanceof PaymentLinkError) return problemResponse(error);
      if (error instanceof StorageUnavailableError) return problemResponse(storageUnavailable(error));
      throw error;
    }
  };
  return Object.assign(handler, { store: resolved.store, directory: resolved.directory });
}
