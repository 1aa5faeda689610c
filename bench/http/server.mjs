/**
 * One benchmark server, in its own process: `node bench/http/server.mjs <framework> <variant>`
 * with BENCH_ISSUER (the JWKS server's origin, also the tokens' `iss`) and BENCH_AUDIENCE set.
 * framework: express | fastify; variant: none | paygate | peer, and for Express also paygate-route.
 * It serves GET /payments/ping (`{"ok":true}`), checking signature, iss, aud, expiry and the scope
 * `pay:processPayments` unless the variant is `none`, then prints `{"port":…}` on stdout and runs
 * until it is killed.
 *
 * paygate-auth is configured as its README shows: on Express `app.use(auth({ verifier }))` with the
 * route's `requireScopes()` (paygate), or one `auth({ verifier, requiredScopes })` guarding the
 * route (paygate-route: one Express layer fewer); on Fastify the plugin and the route's `config.scopes`.
 * The peers are each framework's usual choice, configured as their READMEs show:
 * express-oauth2-jwt-bearer (`auth()` + `requiredScopes()`), and @fastify/jwt with get-jwks.
 */
const [framework, variant] = process.argv.slice(2);
const issuer = process.env.BENCH_ISSUER;
const audience = process.env.BENCH_AUDIENCE;
const SCOPE = 'pay:processPayments';
const PATH = '/payments/ping';
const BODY = { ok: true };

const VARIANTS = { express: ['none', 'paygate', 'paygate-route', 'peer'], fastify: ['none', 'paygate', 'peer'] };
if (!VARIANTS[framework]?.includes(variant) || !issuer || !audience) {
  console.error('usage: BENCH_ISSUER=… BENCH_AUDIENCE=… node bench/http/server.mjs express none|paygate|paygate-route|peer | fastify none|paygate|peer');
  process.exit(2);
}

async function paygateVerifier() {
  const { createVerifier } = await import('paygate-auth');
  const verifier = createVerifier({
    registry: [{ issuer, jwksUri: `${issuer}/.well-known/jwks.json`, products: ['acme'] }],
    audience,
  });
  const [report] = await verifier.warmUp();
  if (!report?.ok) throw new Error(`paygate-auth could not load the JWKS: ${report?.error}`);
  return verifier;
}

async function expressApp() {
  const { default: express } = await import('express');
  const app = express();
  app.disable('x-powered-by');
  const reply = (_req, res) => res.json(BODY);
  if (variant === 'none') {
    app.get(PATH, reply);
  } else if (variant === 'paygate') {
    const { auth, requireScopes } = await import('paygate-auth/express');
    app.use(auth({ verifier: await paygateVerifier() }));
    app.get(PATH, requireScopes(SCOPE), reply);
  } else if (variant === 'paygate-route') {
    const { auth } = await import('paygate-auth/express');
    app.get(PATH, auth({ verifier: await paygateVerifier(), requiredScopes: SCOPE }), reply);
  } else {
    const { auth, requiredScopes } = await import('express-oauth2-jwt-bearer');
    app.use(auth({ issuer, audience, jwksUri: `${issuer}/.well-known/jwks.json`, tokenSigningAlg: 'RS256' }));
    app.get(PATH, requiredScopes(SCOPE), reply);
    // Its errors carry status and WWW-Authenticate; answer them as an app would (Express's default handler also logs).
    app.use((error, _req, res, _next) => res.status(error.status ?? 500).set(error.headers ?? {}).end());
  }
  return new Promise((resolve, reject) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server.address().port));
    server.once('error', reject);
  });
}

async function fastifyApp() {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false });
  const reply = async () => BODY;
  if (variant === 'none') {
    app.get(PATH, reply);
  } else if (variant === 'paygate') {
    const { paygateAuth } = await import('paygate-auth/fastify');
    await app.register(paygateAuth, { verifier: await paygateVerifier() });
    app.get(PATH, { config: { scopes: [SCOPE] } }, reply);
  } else {
    const { default: fastifyJwt } = await import('@fastify/jwt');
    const { default: buildGetJwks } = await import('get-jwks');
    const getJwks = buildGetJwks({ issuersWhitelist: [issuer], providerDiscovery: false });
    await app.register(fastifyJwt, {
      decode: { complete: true },
      secret: (_request, token) => getJwks.getPublicKey({ kid: token.header.kid, domain: token.payload.iss, alg: token.header.alg }),
      verify: { allowedIss: issuer, allowedAud: audience, algorithms: ['RS256'] },
    });
    app.addHook('onRequest', async (request, res) => {
      try {
        await request.jwtVerify();
      } catch (error) {
        return res.code(401).send({ error: 'invalid_token' });
      }
      const scopes = typeof request.user?.scope === 'string' ? request.user.scope.split(' ') : [];
      if (!scopes.includes(SCOPE)) return res.code(403).send({ error: 'insufficient_scope' });
    });
    app.get(PATH, reply);
  }
  await app.listen({ port: 0, host: '127.0.0.1' });
  return app.server.address().port;
}

// A clean exit on SIGTERM (so that `node --cpu-prof` can write its profile).
process.once('SIGTERM', () => process.exit(0));
const port = framework === 'express' ? await expressApp() : await fastifyApp();
process.stdout.write(`${JSON.stringify({ port })}\n`);
