import { Hono } from 'hono';
import { describe, expectTypeOf, it } from 'vitest';
import { type AuthVariables, type VerifiedVariables, auth, requireScopes } from '../../../src/adapters/hono/index.js';
import type { AuthContext } from '../../../src/core/auth-context.js';
import type { Verifier } from '../../../src/core/verifier.js';

declare const verifier: Verifier;

describe('paygate-auth/hono types', () => {
  it("types c.get('auth') and c.var.auth as AuthContext | null in an app declaring AuthVariables", () => {
    const app = new Hono<{ Variables: AuthVariables }>();
    app.use(auth({ verifier }));
    app.get('/info', (c) => {
      expectTypeOf(c.get('auth')).toEqualTypeOf<AuthContext | null>();
      expectTypeOf(c.var.auth).toEqualTypeOf<AuthContext | null>();
      // @ts-expect-error auth may be null (an allowed preflight): it must be checked before use
      return c.json({ tenant: c.get('auth').tenant.ern });
    });
  });

  it("narrows c.get('auth') to AuthContext in a handler after requireScopes", () => {
    const app = new Hono<{ Variables: AuthVariables }>();
    app.use(auth({ verifier }));
    app.post('/payments', requireScopes('pay:processPayments'), (c) => {
      expectTypeOf(c.get('auth')).toEqualTypeOf<AuthContext>();
      return c.json({ tenant: c.get('auth').tenant.ern });
    });
  });

  it('types auth in a chained app without declaring the variables', () => {
    new Hono().use(auth({ verifier })).get('/info', (c) => {
      expectTypeOf(c.get('auth')).toEqualTypeOf<AuthContext | null>();
      return c.text('ok');
    });
  });

  it("fits Hono 4.0 to 4.4's Variables constraint (Record<string, unknown>), which an interface does not", () => {
    // Hono before 4.5 declares `Variables = Record<string, unknown>`: an interface has no implicit
    // index signature, so `new Hono<{ Variables: AuthVariables }>()` failed to compile there.
    expectTypeOf<AuthVariables>().toExtend<Record<string, unknown>>();
    expectTypeOf<VerifiedVariables>().toExtend<Record<string, unknown>>();
  });

  it('takes the one options object of every adapter', () => {
    auth({ verifier, requiredScopes: { anyOf: ['pay:processPayments', 'hub:subscribe'] }, allowPreflight: true });
    // @ts-expect-error a verifier and the verifier's options together
    auth({ verifier, audience: 'https://payments.example' });
    // @ts-expect-error requireScopes needs at least one scope
    requireScopes();
  });
});
