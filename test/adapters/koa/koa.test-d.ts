import Router from '@koa/router';
import Koa, { type DefaultState } from 'koa';
import { describe, expectTypeOf, it } from 'vitest';
import { type AuthState, auth, requireScopes } from '../../../src/adapters/koa/index.js';
import type { AuthContext } from '../../../src/core/auth-context.js';
import type { Verifier } from '../../../src/core/verifier.js';

declare const verifier: Verifier;

describe('paygate-auth/koa types', () => {
  it('types ctx.state.auth as AuthContext | null | undefined through declaration merging: undefined where auth() has not run', () => {
    expectTypeOf<DefaultState['auth']>().toEqualTypeOf<AuthContext | null | undefined>();
    const app = new Koa();
    app.use(auth({ verifier }));
    app.use((ctx) => {
      expectTypeOf(ctx.state.auth).toEqualTypeOf<AuthContext | null | undefined>();
      // @ts-expect-error ctx.state.auth may be null or undefined: it must be checked before use
      ctx.body = ctx.state.auth.tenant;
      // @ts-expect-error a number is not an AuthContext
      ctx.state.auth = 42;
    });
  });

  it('does not let a check for null alone pass for a verified caller: middleware before auth() has undefined', () => {
    new Koa().use((ctx) => {
      // A preflight test (null) still compiles...
      if (ctx.state.auth === null) return;
      // ...but leaves undefined, which middleware mounted before auth() (or an app without it) has.
      expectTypeOf(ctx.state.auth).toEqualTypeOf<AuthContext | undefined>();
      // @ts-expect-error ctx.state.auth is undefined where auth() has not run
      ctx.body = ctx.state.auth.tenant;
    });
  });

  it('adds to an app state of its own through AuthState', () => {
    const app = new Koa<{ requestId: string } & AuthState>();
    app.use(auth({ verifier }));
    app.use((ctx) => {
      expectTypeOf(ctx.state.auth).toEqualTypeOf<AuthContext | null | undefined>();
      expectTypeOf(ctx.state.requestId).toEqualTypeOf<string>();
    });
  });

  it('fits requireScopes into @koa/router routes', () => {
    new Router().post('/payments', requireScopes('pay:processPayments'), (ctx) => {
      ctx.body = ctx.state.auth?.tenant.ern;
    });
    // @ts-expect-error a verifier and the verifier's options together
    auth({ verifier, registry: [] });
  });

  it('narrows ctx.state.auth to AuthContext after requireScopes in @koa/router routes', () => {
    new Router().post('/payments', requireScopes('pay:processPayments'), (ctx) => {
      expectTypeOf(ctx.state.auth).toEqualTypeOf<AuthContext>();
      ctx.body = ctx.state.auth.tenant.id;
    });
    new Router().get('/open', (ctx) => {
      expectTypeOf(ctx.state.auth).toEqualTypeOf<AuthContext | null | undefined>();
    });
  });

  it('narrows ctx.state.auth to AuthContext in an app.use chain after requireScopes', () => {
    new Koa()
      .use(auth({ verifier }))
      .use(requireScopes('pay:processPayments'))
      .use((ctx) => {
        expectTypeOf(ctx.state.auth).toEqualTypeOf<AuthContext>();
      });
  });
});
