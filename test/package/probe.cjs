// Run by node from the directory holding node_modules/paygate-auth (the unpacked tarball).
// argv[2]: 'require' or 'import'; argv[3]: the subpath to load alone, or 'all'.
// Prints one JSON line: the export names, the frameworks loaded, and AuthError identity checks.
'use strict';
const Module = require('node:module');
const path = require('node:path');

const [mode, target] = process.argv.slice(2);
const FRAMEWORKS = JSON.parse(process.env.PROBE_FRAMEWORKS);
const SUBPATHS = JSON.parse(process.env.PROBE_SUBPATHS);
const load = (specifier) => (mode === 'require' ? Promise.resolve(require(specifier)) : import(specifier));

function loadedFrameworks() {
  const found = new Set();
  for (const file of Object.keys(Module._cache)) {
    for (const name of FRAMEWORKS) {
      if (file.includes(`${path.sep}node_modules${path.sep}${name.split('/').join(path.sep)}${path.sep}`)) found.add(name);
    }
  }
  return [...found].sort();
}

const stubVerifier = { verify: async () => ({}), maxTokenBytes: 8192 };

async function authErrors(mods) {
  const root = mods['paygate-auth'];
  const errors = {};
  errors.fetch = await mods['paygate-auth/fetch']
    .withAuth(() => new Response(), { verifier: stubVerifier, forwardErrors: true })(new Request('http://127.0.0.1/'))
    .catch((error) => error);
  errors.express = await new Promise((resolve) =>
    mods['paygate-auth/express'].auth({ verifier: stubVerifier, forwardErrors: true })(
      { method: 'GET', headers: {}, headersDistinct: {} },
      {},
      resolve,
    ),
  );
  errors.koa = await Promise.resolve()
    .then(() =>
      mods['paygate-auth/koa'].auth({ verifier: stubVerifier, forwardErrors: true })(
        { req: { method: 'GET', headers: {} }, state: {} },
        async () => {},
      ),
    )
    .catch((error) => error);
  const { Hono } = mode === 'require' ? require('hono') : await import('hono');
  const hono = new Hono();
  hono.onError((error, c) => {
    errors.hono = error;
    return c.text('handled', 500);
  });
  hono.use(mods['paygate-auth/hono'].auth({ verifier: stubVerifier, forwardErrors: true }));
  hono.get('/', (c) => c.text('reached'));
  await hono.request('/');
  const fastify = mode === 'require' ? require('fastify') : (await import('fastify')).default;
  const app = fastify();
  app.setErrorHandler((error, _request, reply) => {
    errors.fastify = error;
    return reply.code(error.status).send();
  });
  await app.register(mods['paygate-auth/fastify'].default, { verifier: stubVerifier, forwardErrors: true });
  app.get('/', async () => 'reached');
  await app.inject({ url: '/' });
  await app.close();
  const entry = { issuer: 'https://issuer.test', jwksUri: 'https://issuer.test/jwks.json', products: ['acme'] };
  const testIssuer = { entry, audience: 'https://payments.test' };
  errors.testing = await mods['paygate-auth/testing']
    .createTestVerifier(testIssuer)
    .verify('x')
    .catch((error) => error);
  return Object.fromEntries(
    Object.entries(errors).map(([name, error]) => [name, { code: error?.code, sameClass: error instanceof root.AuthError }]),
  );
}

async function main() {
  if (target !== 'all') {
    const mod = await load(target);
    process.stdout.write(JSON.stringify({ exports: Object.keys(mod).sort(), frameworks: loadedFrameworks() }));
    return;
  }
  const mods = {};
  for (const subpath of SUBPATHS) mods[subpath] = await load(subpath);
  process.stdout.write(JSON.stringify({ authErrors: await authErrors(mods) }));
}

main().catch((error) => {
  process.stderr.write(String(error?.stack));
  process.exitCode = 1;
});
