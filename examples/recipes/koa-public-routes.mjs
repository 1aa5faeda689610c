import Koa from 'koa';
import Router from '@koa/router';
import { auth, requireScopes } from 'paygate-auth/koa';

export function createApp(verifier) {
  const app = new Koa();
  const open = new Router().get('/health', (ctx) => {
    ctx.body = 'ok';
  });
  const guarded = new Router()
    .get('/info', (ctx) => {
      ctx.body = { tenant: ctx.state.auth.tenant.ern };
    })
    .post('/payment-links', requireScopes('pay:processPayments'), (ctx) => {
      ctx.status = 201;
      ctx.body = { tenant: ctx.state.auth.tenant.id };
    });
  app.use(open.routes()); // public: mounted before auth()
  app.use(auth({ verifier })); // every router after it is verified
  app.use(guarded.routes());
  return app;
}
