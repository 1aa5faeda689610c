/**
 * The HTTP benchmarks: the same route on Express and on Fastify, served three ways (no auth,
 * paygate-auth, the framework's usual peer), each server in its own process on 127.0.0.1, driven
 * by autocannon from another process with a pool of tokens reused as real clients reuse them.
 * Every server is first shown to answer 200 to a valid token and to refuse a tampered token, a
 * token without the scope and a request without one (the no-auth route only the first). The
 * routes of a framework are then timed in paired rounds of short bursts (see `timeFramework`).
 */
import { execFileSync, fork, spawn } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';
import { createInterface } from 'node:readline';
import { serveJwks } from 'paygate-auth/testing';
import { pairRates } from '../lib/harness.mjs';
import { combineVerdicts, judgeMedian, median } from '../lib/statistics.mjs';
import { intervalText, markdownTable, ops, ratio, ratioAgainst } from '../lib/report.mjs';
import { AUDIENCE, claimsFor, createBenchKey, flat, negativeTokens, signMany, signToken } from '../lib/tokens.mjs';

const SERVER = new URL('./server.mjs', import.meta.url).pathname;
const DRIVER = new URL('./drive.mjs', import.meta.url).pathname;
const PATH = '/payments/ping';
const CONNECTIONS = 16;
const FRAMEWORKS = ['express', 'fastify'];
const NONE = { id: 'none', label: 'no auth' };
const PAYGATE = { id: 'paygate', label: 'paygate-auth' };
const PEER = { id: 'peer', label: { express: 'express-oauth2-jwt-bearer', fastify: '@fastify/jwt + get-jwks' } };
/** The routes served on each framework; the targets compare `paygate` with `none` and `peer`. */
const VARIANTS = {
  // Express: app.use(auth()) + the route's requireScopes() as the README shows, and the route
  // guarded by one auth({ verifier, requiredScopes }), one Express layer fewer.
  express: [NONE, PAYGATE, { id: 'paygate-route', label: 'paygate-auth, one route auth()' }, PEER],
  fastify: [NONE, PAYGATE, PEER],
};
const labelOf = (variant, framework) => (typeof variant.label === 'string' ? variant.label : variant.label[framework]);

/**
 * The CPUs the server and the load generator are pinned to (Linux `taskset`, two CPUs or more;
 * BENCH_HTTP_PIN=0 turns it off), or `null`. Pinned, each has a core of its own: unpinned they
 * share both with each other and with the scheduler's moves, and a route's figure swings by a
 * fifth between rounds on a two-core machine.
 */
function pinning() {
  if (process.env.BENCH_HTTP_PIN === '0' || os.platform() !== 'linux' || os.cpus().length < 2) return null;
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
  } catch {
    return null;
  }
  return { server: '1', driver: '0' };
}

/** Whether the adapters are built (not the `export {};` placeholders). */
export async function adaptersReady() {
  try {
    const [express, fastify] = await Promise.all([import('paygate-auth/express'), import('paygate-auth/fastify')]);
    return typeof express.auth === 'function' && typeof fastify.paygateAuth === 'function';
  } catch {
    return false;
  }
}

/**
 * Starts bench/http/server.mjs for `framework`/`variant` (pinned to `pin.server` when given);
 * resolves once it listens.
 */
export async function startServer(framework, variant, issuer, pin) {
  const command = pin ? ['taskset', ['-c', pin.server, process.execPath, SERVER, framework, variant]] : [process.execPath, [SERVER, framework, variant]];
  const child = spawn(command[0], command[1], {
    env: { ...process.env, BENCH_ISSUER: issuer, BENCH_AUDIENCE: AUDIENCE },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const first = await Promise.race([
    once(lines, 'line').then(([line]) => line),
    once(child, 'exit').then(([code]) => {
      throw new Error(`the ${framework}/${variant} server exited (${code}) before listening`);
    }),
  ]);
  return { child, url: `http://127.0.0.1:${JSON.parse(first).port}` };
}

/** Stops a server from {@link startServer} and waits for it to exit. */
export async function stopServer(child) {
  if (child.exitCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

async function statusOf(url, authorization) {
  const response = await fetch(`${url}${PATH}`, { headers: authorization === undefined ? {} : { authorization } });
  await response.arrayBuffer();
  return response.status;
}

/** Refuses to time a server that does not behave. */
async function qualify(url, variant, checks) {
  const expect = async (what, authorization, wanted) => {
    const status = await statusOf(url, authorization);
    if (!wanted.includes(status)) throw new Error(`${url} (${variant}): ${what} answered ${status}, not ${wanted.join(' or ')}`);
  };
  await expect('a valid token', checks.valid, [200]);
  if (variant === 'none') return;
  await expect('a tampered token', checks.tampered, [401]);
  await expect('an expired token', checks.expired, [401]);
  await expect('no token', undefined, [401]);
  await expect('a token without the scope', checks.unscoped, [403]);
}

/** Untimed seconds of load on each server before the first timed burst. */
const WARM_UP_SECONDS = 2;

/**
 * The load generator (bench/http/drive.mjs) in a process of its own, pinned to `cpu` when given,
 * kept for every burst of a run.
 */
async function startDriver(cpu) {
  const child = fork(DRIVER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ask = (message) =>
    new Promise((resolve, reject) => {
      const onExit = (code) => {
        child.off('message', onMessage);
        reject(new Error(`the load generator exited (${code})`));
      };
      const onMessage = (reply) => {
        child.off('exit', onExit);
        if (reply.ok) resolve(reply);
        else reject(new Error(reply.error));
      };
      child.once('message', onMessage);
      child.once('exit', onExit);
      child.send(message);
    });
  await ask({ kind: 'pin', cpu });
  return {
    burst: (url, headers, seconds) => ask({ kind: 'burst', url, path: PATH, headers, connections: CONNECTIONS, seconds }),
    close: () => child.disconnect(),
  };
}

/**
 * Times one framework's routes in paired rounds. Every route's server runs at once (idle unless
 * driven), each is qualified and warmed up, then each round drives every authenticated route for
 * one burst between two bursts of the no-auth route; a route's ratio is its burst's rate over the
 * mean of the two no-auth bursts either side (`pairRates`, as in the verifiers' paired rounds).
 */
async function timeFramework(framework, { issuer, headers, checks, pin, seconds, rounds, driver, log }) {
  const servers = [];
  try {
    for (const variant of VARIANTS[framework]) {
      const { child, url } = await startServer(framework, variant.id, issuer, pin);
      servers.push({ id: variant.id, variant, child, url, bursts: [] });
      await qualify(url, variant.id, checks);
    }
    for (const server of servers) await driver.burst(server.url, headers, WARM_UP_SECONDS);
    const timed = async (server) => {
      const result = await driver.burst(server.url, headers, seconds);
      if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
        throw new Error(`${framework}/${server.id}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts under load`);
      }
      server.bursts.push(result);
      return result.requestsPerSecond;
    };
    const [none, ...others] = servers;
    const heard = (server, round, value) => log(`  ${framework} round ${round + 1}: ${labelOf(server.variant, framework)} ${ratio(value)}×`);
    const ratios = await pairRates(none, others, rounds, timed, heard);
    return new Map(servers.map((server) => [server.id, { bursts: server.bursts, ratios: server === none ? [1] : ratios.get(server.id) }]));
  } finally {
    for (const server of servers) await stopServer(server.child);
  }
}

/**
 * @param {{ seconds: number, rounds?: number, log: (line: string) => void }} settings
 * @returns {Promise<{ text: string, markdown: string, pending?: boolean, targets?: object[] }>}
 */
export async function runHttp({ seconds, rounds = Number(process.env.BENCH_HTTP_ROUNDS ?? 20), log }) {
  if (!(await adaptersReady())) {
    const text = 'HTTP: skipped, the Express and Fastify adapters are not built yet (placeholders).';
    return { text, markdown: `## HTTP\n\n${text}`, pending: true };
  }
  const key = createBenchKey();
  const jwks = await serveJwks(() => ({ keys: [key.jwk] }));
  const issuer = new URL(jwks.url).origin;
  const pin = pinning();
  let driver;
  try {
    driver = await startDriver(pin?.driver);
    const tokens = await signMany(key, issuer, 100);
    const headers = tokens.map((token) => flat(`Bearer ${token}`));
    const bad = negativeTokens(key, issuer);
    const checks = {
      valid: headers[0],
      tampered: `Bearer ${bad.tampered}`,
      expired: `Bearer ${bad.expired}`,
      unscoped: `Bearer ${signToken(key, claimsFor(issuer, 'unscoped', { scope: 'hub:subscribe' }))}`,
    };
    const pinned = pin ? `servers pinned to CPU ${pin.server}, autocannon to CPU ${pin.driver}` : 'not pinned';
    const method = `${rounds} paired rounds of ${seconds} s bursts after ${WARM_UP_SECONDS} s of warm-up per route`;
    log(`HTTP: GET ${PATH}, ${headers.length} tokens reused, autocannon ${CONNECTIONS} connections, ${method}, ${pinned}`);
    const rows = [];
    const targets = [];
    for (const framework of FRAMEWORKS) {
      const servers = await timeFramework(framework, { issuer, headers, checks, pin, seconds, rounds, driver, log });
      const figure = (id) => {
        const { bursts, ratios } = servers.get(id);
        return {
          rps: median(bursts.map((b) => b.requestsPerSecond)),
          toNone: median(ratios),
          p50: median(bursts.map((b) => b.p50)),
          p99: median(bursts.map((b) => b.p99)),
        };
      };
      for (const variant of VARIANTS[framework]) {
        const f = figure(variant.id);
        rows.push([framework, labelOf(variant, framework), ops(f.rps), ratio(f.toNone), String(f.p50), String(f.p99)]);
      }
      // Both parts read the rounds: each route's ratio to the no-auth bursts beside it, and, round
      // by round, paygate-auth's ratio over the peer's.
      const paygateRounds = servers.get('paygate').ratios;
      const peerRounds = servers.get('peer').ratios;
      const toNone = judgeMedian(paygateRounds, 0.9);
      const ahead = judgeMedian(paygateRounds.map((value, round) => value / peerRounds[round]), 1, { strict: true });
      targets.push({
        target: `${framework}: authenticated route ≥ 0.9× the route without auth, ahead of ${labelOf(PEER, framework)}`,
        measured: `${ratioAgainst(toNone.median, 0.9)}× no auth (${intervalText(toNone)}); peer ${ratio(median(peerRounds))}×, paygate-auth ${ratio(ahead.median)}× its rate (${intervalText(ahead)})`,
        ...combineVerdicts([toNone, ahead]),
      });
    }
    const table = markdownTable(['framework', 'route', 'req/s', '× no auth', 'p50 ms', 'p99 ms'], rows, ['l', 'l', 'r', 'r', 'r', 'r']);
    const markdown = [
      '## HTTP',
      '',
      `GET ${PATH} answering \`{"ok":true}\`; each server in its own process on 127.0.0.1, all of one framework's running at once, autocannon in another process (${CONNECTIONS} connections, ${headers.length} tokens reused in turn; ${method}; ${pinned}). \`× no auth\` is the median of the rounds' ratios, each route's burst rate over the mean of the no-auth bursts just before and just after it; req/s, p50 and p99 are medians over each route's bursts.`,
      'Every authenticated server was first shown to answer 200 to a valid token and 401/403 to a tampered, an expired, a missing and an unscoped one; every timed response was a 2xx.',
      '',
      table,
    ].join('\n');
    return { text: table, markdown, targets };
  } finally {
    driver?.close();
    await jwks.close();
  }
}
