import express, { type Request } from 'express';
import { describe, expectTypeOf, it } from 'vitest';
import { auth, authOf, requireScopes } from '../../../src/adapters/express/index.js';
import type { AuthContext } from '../../../src/core/auth-context.js';
import type { Verifier } from '../../../src/core/verifier.js';

declare const verifier: Verifier;
const app = express();

describe('paygate-auth/express types', () => {
  it('types req.auth as AuthContext | null | undefined through declaration merging: undefined where auth() has not run', () => {
    expectTypeOf<Request['auth']>().toEqualTypeOf<AuthContext | null | undefined>();
    app.get('/me', auth({ verifier }), requireScopes('pay:processPayments'), (req, res) => {
      expectTypeOf(req.auth).toEqualTypeOf<AuthContext | null | undefined>();
      // @ts-expect-error req.auth may be null or undefined: it must be checked before use
      res.json(req.auth.tenant);
      if (req.auth != null) expectTypeOf(req.auth.scopes).toEqualTypeOf<ReadonlySet<string>>();
      res.json(req.auth?.tenant);
    });
  });

  it('does not let a check for null alone pass for a verified caller: a route without auth() has undefined', () => {
    app.get('/health', (req, res) => {
      // A preflight test (null) still compiles...
      if (req.auth === null) return res.end();
      // ...but leaves undefined, which a route mounted before auth() (or an app without it) has.
      expectTypeOf(req.auth).toEqualTypeOf<AuthContext | undefined>();
      // @ts-expect-error req.auth is undefined where auth() has not run
      return res.json(req.auth.tenant);
    });
  });

  it('does not let req.auth be set to anything but an AuthContext or null', () => {
    app.use((req) => {
      // @ts-expect-error a string is not an AuthContext
      req.auth = 'tenant';
    });
  });

  it('takes a verifier, or the verifier options flat, but not both', () => {
    auth({
      verifier,
      requiredScopes: { anyOf: ['pay:chargeToken'] },
      realm: 'payments',
      allowPreflight: true,
      forwardErrors: true,
    });
    auth({ registry: [], audience: 'https://payments.example', jwksMaxAge: 300, realm: 'payments' });
    // @ts-expect-error a verifier and the verifier's options together
    auth({ verifier, audience: 'https://payments.example' });
    // @ts-expect-error neither a verifier nor its options
    auth({ realm: 'payments' });
    // @ts-expect-error realm is a string
    auth({ verifier, realm: 1 });
    // @ts-expect-error a misspelt option
    auth({ verifier, allowPreflights: true });
  });

  it('takes one requirement or several scopes in requireScopes', () => {
    requireScopes('pay:processPayments', 'hub:subscribe');
    requireScopes({ anyOf: ['pay:processPayments', 'hub:subscribe'] });
    requireScopes(['pay:processPayments']);
    // @ts-expect-error at least one scope
    requireScopes();
    // @ts-expect-error several arguments are scopes, not requirements
    requireScopes('pay:processPayments', { anyOf: ['hub:subscribe'] });
  });

  it("narrows the caller with authOf(req) behind requireScopes, as Express cannot type a middleware's check", () => {
    app.post('/payments', requireScopes('pay:processPayments'), (req, res) => {
      expectTypeOf(req.auth).toEqualTypeOf<AuthContext | null | undefined>();
      expectTypeOf(authOf(req)).toEqualTypeOf<AuthContext>();
      res.json(authOf(req).tenant.id);
    });
    // @ts-expect-error authOf takes an Express request
    authOf({});
  });
});
