import express from 'express';
import { auth, authOf, requireScopes } from 'paygate-auth/express';

export function createApp(verifier) {
  const app = express();
  app.get('/health', (_req, res) => res.send('ok')); // public: registered before auth()
  app.use(auth({ verifier })); // every route after it is verified
  app.get('/info', (req, res) => res.json({ tenant: authOf(req).tenant.ern }));
  app.post('/payment-links', requireScopes('pay:processPayments'), (req, res) => {
    res.status(201).json({ tenant: authOf(req).tenant.id });
  });
  return app;
}
