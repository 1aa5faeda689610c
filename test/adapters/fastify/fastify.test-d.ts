import Fastify, { type FastifyRequest } from 'fastify';
import { describe, expectTypeOf, it } from 'vitest';
import paygateAuthDefault, { authOf, paygateAuth, requireScopes } from '../../../src/adapters/fastify/index.js';
import type { AuthContext } from '../../../src/core/auth-context.js';
import type { Verifier } from '../../../src/core/verifier.js';

declare const verifier: Verifier;
const app = Fastify();

describe('paygate-auth/fastify types', () => {
  it('types request.auth as AuthContext | null | undefined through declaration merging: undefined where the plugin is not registered', () => {
    expectTypeOf<FastifyRequest['auth']>().toEqualTypeOf<AuthContext | null | undefined>();
    app.get('/me', async (request) => {
      expectTypeOf(request.auth).toEqualTypeOf<AuthContext | null | undefined>();
      // @ts-expect-error request.auth may be null or undefined: it must be checked before use
      return request.auth.tenant;
    });
  });

  it('does not let a check for null alone pass for a verified caller: an instance without the plugin has undefined', () => {
    app.get('/health', async (request) => {
      if (request.auth === null) return 'public';
      expectTypeOf(request.auth).toEqualTypeOf<AuthContext | undefined>();
      // @ts-expect-error request.auth is undefined where paygateAuth is not registered
      return request.auth.tenant;
    });
  });

  it('registers with a verifier or the verifier options flat, as the named or default export', () => {
    void app.register(paygateAuth, { verifier, requiredScopes: 'pay:processPayments', allowPreflight: true });
    void app.register(paygateAuthDefault, { registry: [], audience: 'https://payments.example' });
    // @ts-expect-error the options need a verifier or the verifier's options
    void app.register(paygateAuth, { realm: 'payments' });
  });

  it('types route config.scopes and config.auth', () => {
    app.get('/scoped', { config: { scopes: ['pay:processPayments', 'hub:subscribe'] } }, async () => 'ok');
    app.get('/any', { config: { scopes: { anyOf: ['pay:chargeToken'] } } }, async () => 'ok');
    app.get('/public', { config: { auth: false } }, async () => 'ok');
    // @ts-expect-error scopes are strings
    app.get('/bad', { config: { scopes: [1] } }, async () => 'ok');
    // @ts-expect-error auth is a boolean
    app.get('/bad', { config: { auth: 'no' } }, async () => 'ok');
  });

  it('fits requireScopes as a preHandler, typed routes included', () => {
    app.get('/manage', { preHandler: requireScopes('pay:manageIntegration') }, async () => 'ok');
    app.get<{ Params: { id: string } }>(
      '/links/:id',
      { preHandler: [requireScopes({ anyOf: ['pay:processPayments'] })] },
      async (request) => request.params.id,
    );
    // @ts-expect-error at least one scope
    requireScopes();
  });

  it("narrows the caller with authOf(request) behind scopes, as Fastify cannot type a hook's check", () => {
    app.post('/payments', { preHandler: requireScopes('pay:processPayments') }, async (request) => {
      expectTypeOf(request.auth).toEqualTypeOf<AuthContext | null | undefined>();
      expectTypeOf(authOf(request)).toEqualTypeOf<AuthContext>();
      return authOf(request).tenant.id;
    });
    app.post('/refunds', { config: { scopes: ['pay:processPayments'] } }, async (request) => authOf(request).tenant.id);
  });
});
