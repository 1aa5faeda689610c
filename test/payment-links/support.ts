/**
 * Common ground of the payment-link handler specifications: a test issuer whose tokens are
 * really verified (JWKS served by msw), two seeded tenants, a frozen clock and predictable ids,
 * and handlers whose every response is checked against the OpenAPI document.
 */
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, beforeEach, vi } from 'vitest';
import type { AuthContext, Verifier } from '../../src/index.js';
import {
  type GetPaymentLinkHandlerOptions,
  type Handler,
  type HandlerRequest,
  type HandlerResponse,
  type IdGenerator,
  InMemoryDirectory,
  type InfoHandlerOptions,
  type OpenApiOperationId,
  type PaymentLinkHandlerDeps,
  type TenantSeed,
  createGetPaymentLinkHandler,
  createInfoHandler,
  createPaymentLinkHandler,
} from '../../src/payment-links/index.js';
import { type TestClaims, type TestIssuer, createTestIssuer, createTestVerifier } from '../../src/testing/index.js';
import { jwksHandlers } from '../../src/testing/msw.js';
import { expectDocumented } from '../support/openapi.js';

/** 2026-03-01T12:00:00.123Z plus 456 µs: the handlers' frozen clock. */
export const NOW = Date.UTC(2026, 2, 1, 12, 0, 0, 123) + 0.456;
export const PAY_PAGE_URL = 'https://pay.example.test/l';
export const TENANT_A = 'ern:acme/tenants/t-1';
export const TENANT_B = 'ern:acme/tenants/t-2';
export const PUBLIC_TENANT = 'ern:acme/tenants/public';

export const STORE_A = '5a1d0f8e-8d3c-4c55-9a55-0f7a3c1b0a01';
export const STORE_A2 = '5a1d0f8e-8d3c-4c55-9a55-0f7a3c1b0a02';
export const CARDIOLOGY_A = 'd0000000-0000-4000-8000-00000000000a';
export const RADIOLOGY_A = 'd0000000-0000-4000-8000-00000000000b';
export const SHOPPER_A = 'c0000000-0000-4000-8000-00000000000a';
export const STORE_B = '5a1d0f8e-8d3c-4c55-9a55-0f7a3c1b0b01';
export const CARDIOLOGY_B = 'd0000000-0000-4000-8000-0000000000b1';

/** Tenant A: two departments (one on a second store), a known shopper, methods with a duplicate. */
export const SEEDS: readonly TenantSeed[] = [
  {
    tenant: TENANT_A,
    stores: [
      { id: STORE_A, name: 'Main desk' },
      { id: STORE_A2, name: 'Imaging desk' },
    ],
    departments: [
      { ref: 'cardiology', id: CARDIOLOGY_A },
      { ref: 'radiology', id: RADIOLOGY_A, store: STORE_A2 },
    ],
    shoppers: [{ ref: 'c-100', id: SHOPPER_A }],
    paymentMethods: { allowed: ['mc', 'visa', 'walley', 'mobilepay', 'visa'], blocked: [] },
  },
  {
    tenant: TENANT_B,
    stores: [{ id: STORE_B }],
    departments: [{ ref: 'cardiology', id: CARDIOLOGY_B }],
    paymentMethods: { allowed: ['mc'], blocked: ['walley'] },
  },
];

/** Ids `00000000-0000-4000-8000-000000000001`, `…0002`… and codes `code-1`… padded to 32 characters. */
export function sequentialIds(): IdGenerator & { readonly issued: number } {
  let uuids = 0;
  let codes = 0;
  return {
    uuid: () => `00000000-0000-4000-8000-${String(++uuids).padStart(12, '0')}`,
    linkCode: () => `code-${++codes}`.padEnd(32, 'x'),
    get issued() {
      return uuids;
    },
  };
}

/** A complete, valid body for tenant A. */
export function validBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    amount: '125.5',
    currency: 'EUR',
    department: '//departments/cardiology',
    shopper: '//customers/c-100',
    email: 'jane@example.com',
    description: 'Consultation',
    meta: { order_id: 'A-1001' },
    ...overrides,
  };
}

/** A request with a JSON body (serialised unless it is a string already). */
export function jsonRequest(auth: AuthContext | null, body: unknown, headers: Record<string, string> = {}): HandlerRequest {
  return {
    auth,
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  };
}

/** `handler` (and its members), each of its responses checked against `operationId` in the OpenAPI document. */
export function documented<H extends Handler>(operationId: OpenApiOperationId, handler: H): H {
  const checked: Handler = async (request) => {
    const response = await handler(request);
    expectDocumented(operationId, response);
    return response;
  };
  return Object.assign(checked, handler);
}

/** A handler on the frozen clock with sequential ids and the seeded directory; `deps` override. */
export function makeHandler(deps: Partial<PaymentLinkHandlerDeps> = {}) {
  const handler = createPaymentLinkHandler({
    payPageUrl: PAY_PAGE_URL,
    directory: new InMemoryDirectory(SEEDS),
    now: () => NOW,
    ids: sequentialIds(),
    ...deps,
  });
  return documented('createPaymentLink', handler);
}

/** `GET /info/`, its responses checked against the document. */
export function makeInfoHandler(options?: InfoHandlerOptions): Handler {
  return documented('getInfo', createInfoHandler(options));
}

/** `GET /payment-links/:id`, its responses checked against the document. */
export function makeReadHandler(options: GetPaymentLinkHandlerOptions): Handler {
  return documented('getPaymentLink', createGetPaymentLinkHandler(options));
}

/** The field errors of a 400 `validation_failed` response. */
export function fieldErrors(response: HandlerResponse): { field: string; code: string }[] {
  const body = response.body as { code?: string; errors?: { field: string; code: string }[] };
  if (body.code !== 'validation_failed' || body.errors === undefined) {
    throw new Error(`expected validation_failed, got ${response.status} ${JSON.stringify(body)}`);
  }
  return body.errors.map(({ field, code }) => ({ field, code }));
}

export interface Callers {
  /** A verified context for a token of `tenant` with `scope` (and other claims). */
  auth(claims?: TestClaims): Promise<AuthContext>;
  readonly issuer: TestIssuer;
}

/**
 * Creates one test issuer (product `acme`) served by msw, and verifies its tokens for real.
 * Registers its own beforeAll/afterAll hooks.
 */
export function useCallers(): Callers {
  const server = setupServer();
  let issuer: TestIssuer | undefined;
  let verifier: Verifier | undefined;
  beforeAll(async () => {
    issuer = await createTestIssuer({ product: 'acme', tenant: TENANT_A, lifetime: 3600 });
    server.use(...jwksHandlers(issuer));
    server.listen({ onUnhandledRequest: 'error' });
    verifier = createTestVerifier(issuer);
  });
  afterAll(() => {
    server.close();
  });
  return {
    get issuer() {
      if (issuer === undefined) throw new Error('used before beforeAll');
      return issuer;
    },
    async auth(claims) {
      if (issuer === undefined || verifier === undefined) throw new Error('used before beforeAll');
      return verifier.verify(await issuer.token(claims));
    },
  };
}

/** Runs each test of the calling `describe` on fake `setTimeout` and `clearTimeout`. */
export function useFakeTimeouts(): void {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
}

/** Whether `promise` has settled once the microtasks queued now have run (on fake timers). */
export async function settledYet(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  const mark = (): void => {
    done = true;
  };
  void promise.then(mark, mark);
  await vi.advanceTimersByTimeAsync(0);
  return done;
}
