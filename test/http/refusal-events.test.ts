/**
 * `onEvent` hears every refusal, 403 `insufficient_scope` included: from `authenticate()`, from an
 * adapter's `requiredScopes`, and from a route's `requireScopes(...)`, as one `verify_failure`
 * each, with the scopes compared as its facts.
 */
import { describe, expect, test } from 'vitest';
import { requireScopes, withAuth } from '../../src/adapters/fetch/index.js';
import { type VerifierEvent, type VerifyFailureEvent, authenticate } from '../../src/index.js';
import { useFixture } from '../support/fixture.js';

const fx = useFixture();

function listener() {
  const events: VerifierEvent[] = [];
  return {
    events,
    onEvent: (event: VerifierEvent) => void events.push(event),
    failures: () => events.filter((event): event is VerifyFailureEvent => event.type === 'verify_failure'),
  };
}

const PAY = 'pay:processPayments';

describe('onEvent and the refusals after verification', () => {
  test('authenticate() reports a token without the scope the route needs as one verify_failure (insufficient_scope)', async () => {
    const heard = listener();
    const verifier = fx.verifier({ onEvent: heard.onEvent });
    const token = await fx.issuer.token({ scope: 'hub:subscribe' });
    const result = await authenticate(verifier, { authorization: `Bearer ${token}`, requiredScopes: PAY });
    expect(result.ok).toBe(false);
    expect(heard.failures()).toMatchObject([
      {
        code: 'insufficient_scope',
        issuer: fx.issuer.issuer,
        facts: { rule: 'scopes', expected: { scopes: [PAY] }, actual: ['hub:subscribe'] },
      },
    ]);
    expect(heard.failures()[0]?.hint).toContain(PAY);
  });

  test('authenticate() reports a token granting none of the default scopes', async () => {
    const heard = listener();
    const token = await fx.issuer.token({ scope: 'other:thing' });
    await authenticate(fx.verifier({ onEvent: heard.onEvent }), { authorization: `Bearer ${token}` });
    expect(heard.failures().map((event) => event.code)).toEqual(['insufficient_scope']);
  });

  test('a token that passes is reported as a success only', async () => {
    const heard = listener();
    const token = await fx.issuer.token({ scope: PAY });
    await authenticate(fx.verifier({ onEvent: heard.onEvent }), { authorization: `Bearer ${token}`, requiredScopes: PAY });
    expect(heard.failures()).toEqual([]);
    expect(heard.events.map((event) => event.type)).toContain('verify_success');
  });

  test("an adapter's requiredScopes refusal (403) reaches onEvent", async () => {
    const heard = listener();
    const handler = withAuth(() => new Response('paid'), { verifier: fx.verifier({ onEvent: heard.onEvent }), requiredScopes: PAY });
    const token = await fx.issuer.token({ scope: 'hub:subscribe' });
    const response = await handler(new Request('http://gateway.test/pay', { headers: { authorization: `Bearer ${token}` } }));
    expect(response.status).toBe(403);
    expect(heard.failures().map((event) => event.code)).toEqual(['insufficient_scope']);
  });

  test("a route's requireScopes(...) refusal (403) reaches onEvent", async () => {
    const heard = listener();
    const handler = withAuth(
      requireScopes(PAY)(() => new Response('paid')),
      { verifier: fx.verifier({ onEvent: heard.onEvent }) },
    );
    const token = await fx.issuer.token({ scope: 'hub:subscribe' });
    const response = await handler(new Request('http://gateway.test/pay', { headers: { authorization: `Bearer ${token}` } }));
    expect(response.status).toBe(403);
    expect(heard.failures().map((event) => event.code)).toEqual(['insufficient_scope']);
  });

  test('a verifier without onEvent has no refusal to report', () => {
    expect(fx.verifier().reportRefusal).toBeUndefined();
  });
});
