import { Hono } from 'hono';
import { requireScopes, withAuth } from 'paygate-auth/fetch';

export function createApp(verifier) {
  const app = new Hono();
  // One verification per request: the gate verifies the token once and keeps the AuthContext.
  const gate = withAuth(
    async (_request, auth, c, next) => {
      c.set('auth', auth);
      await next();
      return c.res;
    },
    { verifier },
  );
  app.get('/health', (c) => c.text('ok')); // public: registered before the gate
  app.use('*', (c, next) => gate(c.req.raw, c, next));
  // Per-route scopes, checked on the AuthContext the gate verified (never a second verification).
  const scoped = (scope, handler) => {
    const checked = requireScopes(scope)((_request, _auth, c) => handler(c));
    return (c) => checked(c.req.raw, c.var.auth, c);
  };
  app.get('/info', (c) => c.json({ tenant: c.var.auth.tenant.ern }));
  app.post(
    '/payment-links',
    scoped('pay:processPayments', (c) => c.json({ tenant: c.var.auth.tenant.id }, 201)),
  );
  app.post(
    '/hub/subscriptions',
    scoped('hub:subscribe', (c) => c.json({ subscribed: true }, 201)),
  );
  return app;
}
