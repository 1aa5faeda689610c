/**
 * `npm run bench:http`, and the HTTP rows of `npm run bench`: the server's CPU per request, with
 * and without authentication, on Express, Fastify and Hono.
 *
 * Every route answers `GET /payments/ping` from one server process (`node bench/http.mjs serve`,
 * each route on its own port of 127.0.0.1), and this process drives it with autocannon over real
 * HTTP: 16 connections sending 100 tokens in turn, as clients reuse theirs, so the verifiers'
 * cached paths. Per framework: the bare route, paygate-auth's adapter (scope
 * `pay:processPayments` required), and the peer a user of that framework would reach for, with its
 * keys from a JWKS served on loopback by the server process (or handed over up front), checking
 * the signature, `iss`, `aud`, expiry and the scope:
 * - Express: express-oauth2-jwt-bearer (`auth()` and `requiredScopes()`);
 * - Fastify: @fastify/jwt with get-jwks (`request.jwtVerify()` in `onRequest`);
 * - Hono: hono/jwk (its `keys` given: with `jwks_uri` it downloads the set on every request).
 * Beside them, the bare route behind a middleware (Fastify: an `onRequest` hook) that does nothing
 * but pass the request on: what the framework charges for any middleware at all.
 *
 * A route's figure is the server process's CPU time (`process.cpuUsage()`, user and system, read
 * over IPC just before and after) over the requests it answered: BENCH_HTTP_REQUESTS (20,000) per
 * burst, BENCH_HTTP_ROUNDS (3) bursts per route, the routes of a framework taking turns in each
 * round, after a warm-up burst. CPU time, unlike a rate, hardly depends on what else the machine
 * runs: the client's own work and other processes are not in it.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { figure, machineLine, markdownTable, ratio, writeSection } from './lib/report.mjs';
import { AUDIENCE, ISSUER, badTokens, claimsFor, createBenchKey, signMany, signToken } from './lib/tokens.mjs';
import { paygateVerifier, versionOf } from './lib/verifiers.mjs';

const PATH = '/payments/ping';
const SCOPE = 'pay:processPayments';
const BODY = { ok: true };
const FRAMEWORKS = ['express', 'fastify', 'hono'];
const NAMES = { express: 'Express', fastify: 'Fastify', hono: 'Hono' };
/** Each framework's routes: the bare one, ours, the peer's, with their labels. */
const ROUTES = {
  express: [
    ['none', 'bare route', 'baseline'],
    ['pass', 'bare route behind a middleware that only calls next()', 'reference'],
    ['paygate', 'paygate-auth `auth()`, scope required', 'ours'],
    ['peer', 'express-oauth2-jwt-bearer, scope required', 'peer'],
  ],
  fastify: [
    ['none', 'bare route', 'baseline'],
    ['pass', 'bare route behind an `onRequest` hook that only calls done()', 'reference'],
    ['paygate', 'paygate-auth plugin, `config.scopes`', 'ours'],
    ['peer', '@fastify/jwt with get-jwks, scope checked', 'peer'],
  ],
  hono: [
    ['none', 'bare route', 'baseline'],
    ['pass', 'bare route behind a middleware that only calls next()', 'reference'],
    ['paygate', 'paygate-auth/hono `auth()`, scope required', 'ours'],
    ['peer', 'hono/jwk, scope checked', 'peer'],
  ],
};

function hasScope(scope) {
  return typeof scope === 'string' && scope.split(' ').includes(SCOPE);
}

/** A JWKS of `jwk` on 127.0.0.1: its base URL and the server. */
async function jwksServer(jwk) {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${server.address().port}`;
}

function listenNode(app) {
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });
}

async function expressRoutes(jwk, jwksBase) {
  const [{ default: express }, { auth }, peer] = await Promise.all([
    import('express'),
    import('paygate-auth/express'),
    import('express-oauth2-jwt-bearer'),
  ]);
  const answer = (_req, res) => res.json(BODY);
  const peerAuth = peer.auth({ issuer: ISSUER, audience: AUDIENCE, jwksUri: `${jwksBase}/jwks.json`, tokenSigningAlg: 'RS256' });
  return {
    none: await listenNode(express().get(PATH, answer)),
    pass: await listenNode(express().get(PATH, (_req, _res, next) => next(), answer)),
    paygate: await listenNode(express().get(PATH, auth({ verifier: await paygateVerifier(jwk), requiredScopes: SCOPE }), answer)),
    // Its failures are errors for Express's error path: answered here, as an app would, not logged.
    peer: await listenNode(
      express()
        .get(PATH, peerAuth, peer.requiredScopes(SCOPE), answer)
        .use((error, _req, res, _next) => res.status(error.status ?? 500).end()),
    ),
  };
}

async function fastifyRoutes(jwk, jwksBase) {
  const [{ default: Fastify }, { paygateAuth }, { default: fastifyJwt }, { default: buildGetJwks }] = await Promise.all([
    import('fastify'),
    import('paygate-auth/fastify'),
    import('@fastify/jwt'),
    import('get-jwks'),
  ]);
  const start = async (setUp, config = {}) => {
    const app = Fastify({ logger: false });
    await setUp(app);
    app.get(PATH, { config }, async () => BODY);
    await app.listen({ port: 0, host: '127.0.0.1' });
    return app.server.address().port;
  };
  const getJwks = buildGetJwks({ providerDiscovery: false, jwksPath: '/jwks.json' });
  const peer = async (app) => {
    await app.register(fastifyJwt, {
      decode: { complete: true },
      secret: (_request, token) => getJwks.getPublicKey({ kid: token.header.kid, alg: token.header.alg, domain: jwksBase }),
      verify: { allowedIss: ISSUER, allowedAud: AUDIENCE, algorithms: ['RS256'] },
    });
    app.addHook('onRequest', async (request, reply) => {
      try {
        await request.jwtVerify();
      } catch {
        return reply.code(401).send({ error: 'invalid_token' });
      }
      if (!hasScope(request.user.scope)) return reply.code(403).send({ error: 'insufficient_scope' });
    });
  };
  return {
    none: await start(async () => undefined),
    pass: await start(async (app) => app.addHook('onRequest', (_request, _reply, done) => done())),
    paygate: await start(async (app) => app.register(paygateAuth, { verifier: await paygateVerifier(jwk) }), { scopes: [SCOPE] }),
    peer: await start(peer),
  };
}

async function honoRoutes(jwk) {
  const [{ Hono }, { serve }, { auth }, { jwk: honoJwk }] = await Promise.all([
    import('hono'),
    import('@hono/node-server'),
    import('paygate-auth/hono'),
    import('hono/jwk'),
  ]);
  const start = (app) =>
    new Promise((resolve) => {
      serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(info.port));
    });
  const answer = (c) => c.json(BODY);
  const verifier = await paygateVerifier(jwk);
  const peer = new Hono()
    .use(honoJwk({ keys: [jwk], alg: ['RS256'], verification: { iss: ISSUER, aud: AUDIENCE } }))
    .get(PATH, (c) => (hasScope(c.get('jwtPayload').scope) ? answer(c) : c.json({ error: 'insufficient_scope' }, 403)));
  return {
    none: await start(new Hono().get(PATH, answer)),
    pass: await start(new Hono().use((_c, next) => next()).get(PATH, answer)),
    // The scope required as on Express, by the one middleware: a route's requireScopes(...) is one
    // more handler for Hono to compose.
    paygate: await start(new Hono().use(auth({ verifier, requiredScopes: SCOPE })).get(PATH, answer)),
    peer: await start(peer),
  };
}

/**
 * The server process: the routes of `frameworks`, their ports by `framework:route` sent over IPC;
 * then its CPU time on each request for it, and on `'exit'` its exit (for a count under callgrind,
 * bench/http-instructions.mjs).
 */
async function serve(jwk, frameworks) {
  const jwksBase = await jwksServer(jwk);
  const ports = {};
  const builders = { express: expressRoutes, fastify: fastifyRoutes, hono: honoRoutes };
  for (const framework of frameworks) {
    for (const [route, port] of Object.entries(await builders[framework](jwk, jwksBase))) ports[`${framework}:${route}`] = port;
  }
  process.on('message', (message) => (message === 'exit' ? process.exit(0) : process.send(process.cpuUsage())));
  process.send({ ports });
}

/** The server's CPU time so far, in microseconds. */
async function cpuOf(child) {
  child.send('cpu');
  const [{ user, system }] = await once(child, 'message');
  return user + system;
}

/** Sends `amount` requests to `url`, 16 connections, the headers in turn; throws on any failure. */
export async function load(url, headers, amount) {
  const { default: autocannon } = await import('autocannon');
  const requests = headers.map((authorization) => ({ method: 'GET', path: PATH, headers: { authorization } }));
  const result = await autocannon({ url, connections: 16, requests, amount });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result.requests.total;
}

/** Throws unless the route answers `status` to `authorization`. */
async function expectStatus(url, authorization, status, what) {
  const response = await fetch(`${url}${PATH}`, { headers: authorization === undefined ? {} : { authorization } });
  await response.arrayBuffer();
  if (response.status !== status) throw new Error(`${url}: ${what} answered ${response.status}, not ${status}`);
}

/** Every route must accept a valid token and refuse a tampered one, none, and one without the scope. */
async function qualify(url, key, headers) {
  await expectStatus(url, headers[0], 200, 'a valid token');
  await expectStatus(url, `Bearer ${badTokens(key, ISSUER).tampered}`, 401, 'a tampered token');
  await expectStatus(url, `Bearer ${badTokens(key, ISSUER).wrongAudience}`, 401, 'a token for another audience');
  await expectStatus(url, undefined, 401, 'no token');
  await expectStatus(
    url,
    `Bearer ${signToken(key, claimsFor(ISSUER, 'x', { scope: 'pay:viewReports' }))}`,
    403,
    'a token without the scope',
  );
}

/**
 * Measures every route: `{ framework, route, label, role, cpuPerRequest (µs), rounds: [µs…] }`.
 * `log` reports progress.
 */
export async function measureHttp({ log, requests = 20_000, rounds = 3 }) {
  const key = createBenchKey();
  const headers = (await signMany(key, ISSUER, 100)).map((token) => `Bearer ${token}`);
  const child = fork(fileURLToPath(import.meta.url), ['serve'], {
    env: { ...process.env, BENCH_JWK: JSON.stringify(key.jwk) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const [{ ports }] = await once(child, 'message');
    const url = (framework, route) => `http://127.0.0.1:${ports[`${framework}:${route}`]}`;
    const results = [];
    for (const framework of FRAMEWORKS) {
      const routes = ROUTES[framework].map(([route, label, role]) => ({ framework, route, label, role, cpu: 0, requests: 0, rounds: [] }));
      for (const { route, role } of routes) {
        if (role === 'ours' || role === 'peer') await qualify(url(framework, route), key, headers);
        await load(url(framework, route), headers, Math.ceil(requests / 4));
      }
      for (let round = 0; round < rounds; round += 1) {
        // Each round starts with another route, so that none always follows the same one.
        for (let turn = 0; turn < routes.length; turn += 1) {
          const entry = routes[(round + turn) % routes.length];
          const before = await cpuOf(child);
          const answered = await load(url(framework, entry.route), headers, requests);
          const spent = (await cpuOf(child)) - before;
          entry.cpu += spent;
          entry.requests += answered;
          entry.rounds.push(spent / answered);
        }
      }
      log(`measured the ${NAMES[framework]} routes`);
      for (const { cpu, requests: answered, ...entry } of routes) results.push({ ...entry, cpuPerRequest: cpu / answered });
    }
    return results;
  } finally {
    child.kill();
  }
}

/** The rows of `npm run bench` (see bench/lib/report.mjs): requests per second of server CPU. */
export function httpRows(results) {
  return results.map(({ framework, route, label, role, cpuPerRequest }) => ({
    id: `http:${framework}:${route}`,
    group: `HTTP route, ${NAMES[framework]} (per second of server CPU)`,
    label,
    role,
    rate: 1e6 / cpuPerRequest,
  }));
}

export default async function httpSection({ log }) {
  const requests = Number(process.env.BENCH_HTTP_REQUESTS ?? 20_000);
  const rounds = Number(process.env.BENCH_HTTP_ROUNDS ?? 3);
  return httpRows(await measureHttp({ log, requests, rounds }));
}

/** A difference with its sign. */
function signed(value) {
  return value < 0 ? `−${figure(-value)}` : `+${figure(value)}`;
}

/**
 * The table of `npm run bench:http`: per route, the server's CPU per request (and each round's),
 * what authentication adds to the bare route, and the bare route's CPU over the route's, overall
 * and round by round (each round's routes ran back to back).
 */
export function httpTable(results) {
  const body = [];
  for (const framework of FRAMEWORKS) {
    const routes = results.filter((entry) => entry.framework === framework);
    const bare = routes.find((entry) => entry.role === 'baseline');
    for (const entry of routes) {
      const perRound = entry.rounds.map((value, index) => bare.rounds[index] / value);
      const spread = `${ratio(Math.min(...perRound))} – ${ratio(Math.max(...perRound))}`;
      body.push([
        entry === routes[0] ? NAMES[framework] : '',
        entry.label,
        figure(entry.cpuPerRequest),
        entry.rounds.map((value) => figure(value)).join(' / '),
        entry === bare ? '' : signed(entry.cpuPerRequest - bare.cpuPerRequest),
        entry === bare ? '' : ratio(bare.cpuPerRequest / entry.cpuPerRequest),
        entry === bare ? '' : spread,
      ]);
    }
  }
  const head = ['framework', 'route', 'server CPU per request (µs)', 'each round (µs)', 'added (µs)', 'bare ÷ route', 'spread over rounds'];
  return markdownTable(head, body, ['l', 'l', 'r', 'r', 'r', 'r', 'r']);
}

async function main() {
  const requests = Number(process.env.BENCH_HTTP_REQUESTS ?? 20_000);
  const rounds = Number(process.env.BENCH_HTTP_ROUNDS ?? 3);
  if (!(Number.isInteger(requests) && requests >= 1000 && Number.isInteger(rounds) && rounds >= 1)) {
    console.error('bench/http.mjs: BENCH_HTTP_REQUESTS ≥ 1000, BENCH_HTTP_ROUNDS ≥ 1');
    process.exit(2);
  }
  const startedAt = new Date();
  const log = (line) => console.log(line);
  const peers = ['express', 'express-oauth2-jwt-bearer', 'fastify', '@fastify/jwt', 'get-jwks', 'hono', '@hono/node-server', 'autocannon'];
  const versions = peers.map((name) => `${name} ${versionOf(name)}`).join(', ');
  log(`paygate-auth server CPU per request, ${startedAt.toISOString()}; ${machineLine()}`);
  const table = httpTable(await measureHttp({ log, requests, rounds }));
  log(`\n${table}`);
  const legend =
    `${rounds} rounds of ${requests} requests per route after a warm-up, 16 connections, 100 tokens reused (the cached path). ` +
    "CPU is the server process's `process.cpuUsage()` (user and system) over the requests it answered; " +
    "bare ÷ route is the bare route's CPU per request over the route's (1.00× adds nothing), its spread that of each round's routes, run back to back.";
  writeSection(
    'http',
    ['## `npm run bench:http`', '', `Run ${startedAt.toISOString()}: ${machineLine()}. ${versions}.`, '', legend, '', table].join('\n'),
  );
  log('written to bench/RESULTS.md');
}

if (process.argv[2] === 'serve') await serve(JSON.parse(process.env.BENCH_JWK), process.argv[3]?.split(',') ?? FRAMEWORKS);
else if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
