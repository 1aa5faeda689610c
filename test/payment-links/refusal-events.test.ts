/**
 * A reference handler's own 403 `insufficient_scope` reaches the verifier's `onEvent`, as an
 * adapter's does, when the handler is given the verifier's `reportRefusal`: one `verify_failure`
 * per refusal, with the scopes compared as its facts.
 */
import { describe, expect, it } from 'vitest';
import type { AuthContext, Verifier, VerifierEvent, VerifyFailureEvent } from '../../src/index.js';
import { InMemoryPaymentLinkStore } from '../../src/payment-links/index.js';
import { createTestVerifier } from '../../src/testing/index.js';
import { TENANT_A, jsonRequest, makeHandler, makeInfoHandler, makeReadHandler, useCallers, validBody } from './support.js';

const callers = useCallers();
const PAY = 'pay:processPayments';
const LINK_ID = '00000000-0000-4000-8000-000000000001';

/** A verifier of the callers' issuer whose `onEvent` keeps its refusals. */
function listening(): { verifier: Verifier; failures: VerifyFailureEvent[] } {
  const failures: VerifyFailureEvent[] = [];
  const onEvent = (event: VerifierEvent): void => {
    if (event.type === 'verify_failure') failures.push(event);
  };
  return { verifier: createTestVerifier(callers.issuer, { onEvent }), failures };
}

async function authOf(verifier: Verifier, scope: string): Promise<AuthContext> {
  return verifier.verify(await callers.issuer.token({ scope }));
}

describe('the reference handlers report their scope refusals', () => {
  it('POST /payment-links/ reports a token without pay:processPayments as one insufficient_scope, scopes as facts', async () => {
    const { verifier, failures } = listening();
    const handler = makeHandler({ reportRefusal: verifier.reportRefusal });
    const response = await handler(jsonRequest(await authOf(verifier, 'hub:subscribe'), validBody()));
    expect(response.status).toBe(403);
    expect(failures).toMatchObject([
      {
        code: 'insufficient_scope',
        issuer: callers.issuer.issuer,
        facts: { rule: 'scopes', expected: { scopes: [PAY] }, actual: ['hub:subscribe'] },
      },
    ]);
  });

  it('GET /payment-links/:id reports a token without pay:processPayments', async () => {
    const { verifier, failures } = listening();
    const read = makeReadHandler({ store: new InMemoryPaymentLinkStore(), reportRefusal: verifier.reportRefusal });
    const response = await read({ auth: await authOf(verifier, 'hub:subscribe'), headers: {}, params: { id: LINK_ID } });
    expect(response.status).toBe(403);
    expect(failures.map((event) => event.code)).toEqual(['insufficient_scope']);
  });

  it('GET /info/ reports a token holding none of the gateway scopes', async () => {
    const { verifier, failures } = listening();
    const info = makeInfoHandler({ reportRefusal: verifier.reportRefusal });
    const response = await info({ auth: await authOf(verifier, 'other:thing'), headers: {} });
    expect(response.status).toBe(403);
    expect(failures.map((event) => event.code)).toEqual(['insufficient_scope']);
  });

  it('reports nothing for a caller it lets through', async () => {
    const { verifier, failures } = listening();
    const handler = makeHandler({ reportRefusal: verifier.reportRefusal });
    const response = await handler(jsonRequest(await authOf(verifier, PAY), validBody()));
    expect(response.status).toBe(201);
    expect(failures).toEqual([]);
  });

  it('does not report the public tenant refused (403 public_tenant_not_allowed): its scopes were enough', async () => {
    const { verifier, failures } = listening();
    const handler = makeHandler({ reportRefusal: verifier.reportRefusal });
    const auth = await verifier.verify(await callers.issuer.token({ scope: PAY, tenant_ern: 'ern:acme/tenants/public' }));
    const response = await handler(jsonRequest(auth, validBody()));
    expect(response.body).toMatchObject({ code: 'public_tenant_not_allowed' });
    expect(failures).toEqual([]);
  });

  it('answers the same 403 with reportRefusal undefined, as a verifier without onEvent gives it', async () => {
    const verifier = createTestVerifier(callers.issuer);
    expect(verifier.reportRefusal).toBeUndefined();
    const handler = makeHandler({ reportRefusal: verifier.reportRefusal });
    const response = await handler(jsonRequest(await authOf(verifier, 'hub:subscribe'), validBody()));
    expect(response.status).toBe(403);
    expect(await handler.store.list(TENANT_A)).toEqual([]);
  });

  it.each([
    ['createPaymentLinkHandler', () => makeHandler({ reportRefusal: 'log' as never })],
    ['createGetPaymentLinkHandler', () => makeReadHandler({ store: new InMemoryPaymentLinkStore(), reportRefusal: 'log' as never })],
    ['createInfoHandler', () => makeInfoHandler({ reportRefusal: 'log' as never })],
  ])('%s refuses a reportRefusal that is not a function with a TypeError naming it', (owner, create) => {
    expect(create).toThrow(new TypeError(`${owner}: reportRefusal must be a function, got "log"`));
  });
});
