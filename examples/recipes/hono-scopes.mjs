import { Hono } from 'hono';
import { auth, requireScopes } from 'paygate-auth/hono';

export function createApp(verifier) {
  const app = new Hono();
  app.get('/health', (c) => c.text('ok')); // public: registered before auth()
  // One verification per request: auth() verifies the token once and sets c.var.auth.
  app.use(auth({ verifier }));
  app.get('/info', (c) => c.json({ tenant: c.get('auth').tenant.ern }));
  // Per-route scopes, checked on the AuthContext auth() verified (never a second verification).
  app.post('/payment-links', requireScopes('pay:processPayments'), (c) => c.json({ tenant: c.get('auth').tenant.id }, 201));
  app.post('/hub/subscriptions', requireScopes('hub:subscribe'), (c) => c.json({ subscribed: true }, 201));
  return app;
}
