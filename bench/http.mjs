/**
 * The HTTP rows of `npm run bench`: `GET /payments/ping` on Express and on Fastify, without auth
 * and behind paygate-auth's adapter (the scope `pay:processPayments` required), each its own
 * server on 127.0.0.1 in a child process (`node bench/http.mjs serve`), driven by autocannon from
 * this one: 16 connections reusing 100 tokens in turn, as clients reuse theirs (so mostly the
 * verifier's cached path). The two routes of a framework alternate in bursts (BENCH_HTTP_SECONDS,
 * 3; two each), and a route's rate is its requests over its bursts' time.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { ISSUER, badTokens, claimsFor, createBenchKey, signMany, signToken } from './lib/tokens.mjs';
import { paygateVerifier } from './lib/verifiers.mjs';

const PATH = '/payments/ping';
const SCOPE = 'pay:processPayments';
const BODY = { ok: true };

/** The four servers, in the child: resolves to their ports by name. */
async function serve(jwk) {
  const [{ default: express }, { default: Fastify }, { auth }, { paygateAuth }] = await Promise.all([
    import('express'),
    import('fastify'),
    import('paygate-auth/express'),
    import('paygate-auth/fastify'),
  ]);
  const listen = (app) =>
    new Promise((resolve) =>
      app.listen(0, '127.0.0.1', function () {
        resolve(this.address().port);
      }),
    );
  const expressNone = express().get(PATH, (_req, res) => res.json(BODY));
  const expressAuth = express().get(PATH, auth({ verifier: await paygateVerifier(jwk), requiredScopes: SCOPE }), (_req, res) =>
    res.json(BODY),
  );
  const fastify = async (verifier) => {
    const app = Fastify({ logger: false });
    if (verifier !== undefined) await app.register(paygateAuth, { verifier });
    app.get(PATH, { config: verifier === undefined ? {} : { scopes: [SCOPE] } }, async () => BODY);
    await app.listen({ port: 0, host: '127.0.0.1' });
    return app.server.address().port;
  };
  return {
    'express:none': await listen(expressNone),
    'express:auth': await listen(expressAuth),
    'fastify:none': await fastify(),
    'fastify:auth': await fastify(await paygateVerifier(jwk)),
  };
}

if (process.argv[2] === 'serve') {
  process.stdout.write(`${JSON.stringify(await serve(JSON.parse(process.env.BENCH_JWK)))}\n`);
}

/** One autocannon burst of `seconds` against `url`: its requests and elapsed ms. */
async function burst(url, headers, seconds) {
  const { default: autocannon } = await import('autocannon');
  const requests = headers.map((authorization) => ({ method: 'GET', path: PATH, headers: { authorization } }));
  const started = performance.now();
  const result = await autocannon({ url, connections: 16, requests, duration: seconds });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return { requests: result.requests.total, ms: performance.now() - started };
}

/** Throws unless the route answers `status` to `authorization`. */
async function expectStatus(url, authorization, status, what) {
  const response = await fetch(`${url}${PATH}`, { headers: authorization === undefined ? {} : { authorization } });
  await response.arrayBuffer();
  if (response.status !== status) throw new Error(`${url}: ${what} answered ${response.status}, not ${status}`);
}

export default async function httpRows({ log }) {
  const seconds = Number(process.env.BENCH_HTTP_SECONDS ?? 3);
  const key = createBenchKey();
  const headers = (await signMany(key, ISSUER, 100)).map((token) => `Bearer ${token}`);
  const child = spawn(process.execPath, [new URL(import.meta.url).pathname, 'serve'], {
    env: { ...process.env, BENCH_JWK: JSON.stringify(key.jwk) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const [line] = await once(createInterface({ input: child.stdout }), 'line');
    const ports = JSON.parse(line);
    const url = (name) => `http://127.0.0.1:${ports[name]}`;
    const rows = [];
    for (const framework of ['express', 'fastify']) {
      const [none, auth] = [url(`${framework}:none`), url(`${framework}:auth`)];
      await expectStatus(auth, headers[0], 200, 'a valid token');
      await expectStatus(auth, `Bearer ${badTokens(key, ISSUER).tampered}`, 401, 'a tampered token');
      await expectStatus(auth, undefined, 401, 'no token');
      await expectStatus(
        auth,
        `Bearer ${signToken(key, claimsFor(ISSUER, 'x', { scope: 'pay:viewReports' }))}`,
        403,
        'a token without the scope',
      );
      await burst(none, headers, 1);
      await burst(auth, headers, 1);
      const totals = { none: { requests: 0, ms: 0 }, auth: { requests: 0, ms: 0 } };
      for (let round = 0; round < 2; round += 1) {
        for (const [name, target] of [
          ['none', none],
          ['auth', auth],
        ]) {
          const { requests, ms } = await burst(target, headers, seconds);
          totals[name].requests += requests;
          totals[name].ms += ms;
        }
      }
      log(`timed the ${framework} routes`);
      const group = `HTTP route, ${framework === 'express' ? 'Express' : 'Fastify'}`;
      const rate = ({ requests, ms }) => (requests * 1000) / ms;
      rows.push({ id: `${framework}:none`, group, label: 'no auth', role: 'baseline', rate: rate(totals.none) });
      rows.push({
        id: `${framework}:auth`,
        group,
        label: 'paygate-auth adapter, scope required',
        role: 'ours',
        rate: rate(totals.auth),
      });
    }
    return rows;
  } finally {
    child.kill();
  }
}
