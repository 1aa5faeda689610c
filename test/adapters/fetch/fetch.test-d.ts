import { describe, expectTypeOf, it } from 'vitest';
import { requireScopes, withAuth } from '../../../src/adapters/fetch/index.js';
import type { AuthContext } from '../../../src/core/auth-context.js';
import type { Verifier } from '../../../src/core/verifier.js';

declare const verifier: Verifier;
interface Env {
  readonly PAYMENTS: string;
}
interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
}

describe('paygate-auth/fetch types', () => {
  it('hands the handler an AuthContext that is never null without allowPreflight', () => {
    const handler = withAuth(
      (request, auth) => {
        expectTypeOf(request).toEqualTypeOf<Request>();
        expectTypeOf(auth).toEqualTypeOf<AuthContext>();
        return Response.json(auth.tenant);
      },
      { verifier },
    );
    expectTypeOf(handler).toEqualTypeOf<(request: Request) => Promise<Response>>();
  });

  it('hands the handler AuthContext | null with allowPreflight', () => {
    withAuth(
      (_request, auth) => {
        expectTypeOf(auth).toEqualTypeOf<AuthContext | null>();
        // @ts-expect-error auth is null for an allowed preflight
        return Response.json(auth.tenant);
      },
      { verifier, allowPreflight: true },
    );
  });

  it("keeps the runtime's extra arguments in the wrapped signature", () => {
    const handler = withAuth(
      (_request, auth, env: Env, ctx: ExecutionContext) => {
        ctx.waitUntil(Promise.resolve(env.PAYMENTS));
        return Response.json(auth.tenant);
      },
      { verifier },
    );
    expectTypeOf(handler).toEqualTypeOf<(request: Request, env: Env, ctx: ExecutionContext) => Promise<Response>>();
    // @ts-expect-error env is required
    void handler(new Request('http://127.0.0.1/'));
  });

  it('needs the handler to return a Response', () => {
    // @ts-expect-error a string is not a Response
    withAuth(() => 'ok', { verifier });
    // @ts-expect-error a verifier and the verifier's options together
    withAuth(() => new Response(), { verifier, audience: 'https://payments.example' });
  });

  it('wraps a handler with requireScopes, keeping its AuthContext', () => {
    const scoped = requireScopes('pay:processPayments')((_request, auth, env: Env) =>
      Response.json({ tenant: auth.tenant.ern, env: env.PAYMENTS }),
    );
    expectTypeOf(withAuth(scoped, { verifier })).toEqualTypeOf<(request: Request, env: Env) => Promise<Response>>();
  });

  it('narrows auth to AuthContext inside requireScopes, even where allowPreflight lets null through', () => {
    const scoped = requireScopes('pay:processPayments')((_request, auth) => {
      expectTypeOf(auth).toEqualTypeOf<AuthContext>();
      return Response.json(auth.tenant.id);
    });
    withAuth(scoped, { verifier, allowPreflight: true });
  });
});
