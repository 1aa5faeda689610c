/**
 * The HTTP benchmarks: the same route on Express and on Fastify, served three ways (no auth,
 * paygate-auth, the framework's usual peer), each server in its own process on 127.0.0.1, driven
 * by autocannon from another process with a pool of tokens reused as real clients reuse them.
 * Every server is first shown to answer 200 to a valid token and to refuse a tampered token, a
 * token without the scope and a request without one (the no-auth route only the first).
 */
import { execFileSync, fork, spawn } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';
import { createInterface } from 'node:readline';
import { serveJwks } from 'paygate-auth/testing';
import { median } from '../lib/harness.mjs';
import { markdownTable, ops, ratio, ratioAgainst } from '../lib/report.mjs';
import { AUDIENCE, claimsFor, createBenchKey, flat, negativeTokens, signMany, signToken } from '../lib/tokens.mjs';

const SERVER = new URL('./server.mjs', import.meta.url).pathname;
const DRIVER = new URL('./drive.mjs', import.meta.url).pathname;
const PATH = '/payments/ping';
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

function drive(url, headers, seconds, pin) {
  const child = fork(DRIVER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (message) => {
      child.kill();
      if (message.ok) resolve(message);
      else reject(new Error(message.error));
    });
    child.once('error', reject);
    child.send({ url, path: PATH, headers, connections: 16, seconds, warmupSeconds: 1, cpu: pin?.driver });
  });
}

/**
 * @param {{ seconds: number, rounds?: number, log: (line: string) => void }} settings
 * @returns {Promise<{ text: string, markdown: string, pending?: boolean, targets?: object[] }>}
 */
export async function runHttp({ seconds, rounds = Number(process.env.BENCH_HTTP_ROUNDS ?? 5), log }) {
  if (!(await adaptersReady())) {
    const text = 'HTTP: skipped, the Express and Fastify adapters are not built yet (placeholders).';
    return { text, markdown: `## HTTP\n\n${text}`, pending: true };
  }
  const key = createBenchKey();
  const jwks = await serveJwks(() => ({ keys: [key.jwk] }));
  const issuer = new URL(jwks.url).origin;
  try {
    const tokens = await signMany(key, issuer, 100);
    const headers = tokens.map((token) => flat(`Bearer ${token}`));
    const bad = negativeTokens(key, issuer);
    const checks = {
      valid: headers[0],
      tampered: `Bearer ${bad.tampered}`,
      expired: `Bearer ${bad.expired}`,
      unscoped: `Bearer ${signToken(key, claimsFor(issuer, 'unscoped', { scope: 'hub:subscribe' }))}`,
    };
    const pin = pinning();
    const pinned = pin ? `server pinned to CPU ${pin.server}, autocannon to CPU ${pin.driver}` : 'not pinned';
    log(`HTTP: GET ${PATH}, ${headers.length} tokens reused, autocannon 16 connections, 1 s warm-up + ${seconds} s per route, ${rounds} round(s), ${pinned}`);
    const samples = new Map();
    for (let round = 0; round < rounds; round += 1) {
      for (const framework of FRAMEWORKS) {
        for (const variant of VARIANTS[framework]) {
          const { child, url } = await startServer(framework, variant.id, issuer, pin);
          try {
            await qualify(url, variant.id, checks);
            const result = await drive(url, headers, seconds, pin);
            if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
              throw new Error(`${framework}/${variant.id}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts under load`);
            }
            const id = `${framework}:${variant.id}`;
            if (!samples.has(id)) samples.set(id, []);
            samples.get(id).push(result);
            log(`  ${framework.padEnd(8)} ${labelOf(variant, framework).padEnd(28)} ${ops(result.requestsPerSecond)} req/s, p99 ${result.p99} ms`);
          } finally {
            await stopServer(child);
          }
        }
      }
    }
    const figure = (id) => {
      const list = samples.get(id);
      return { rps: median(list.map((r) => r.requestsPerSecond)), p99: median(list.map((r) => r.p99)), p50: median(list.map((r) => r.p50)) };
    };
    // A route against no auth: the median of the rounds' ratios, each of two runs made one after
    // the other, so that a slow spell of the machine weighs on both sides of a ratio.
    const toNone = (framework, id) => {
      const none = samples.get(`${framework}:none`);
      return median(samples.get(`${framework}:${id}`).map((r, round) => r.requestsPerSecond / none[round].requestsPerSecond));
    };
    const rows = [];
    const targets = [];
    for (const framework of FRAMEWORKS) {
      const paygate = figure(`${framework}:paygate`);
      const peer = figure(`${framework}:peer`);
      for (const variant of VARIANTS[framework]) {
        const f = figure(`${framework}:${variant.id}`);
        rows.push([framework, labelOf(variant, framework), ops(f.rps), ratio(toNone(framework, variant.id)), String(f.p50), String(f.p99)]);
      }
      targets.push({
        target: `${framework}: authenticated route ≥ 0.9× the route without auth, ahead of ${labelOf(PEER, framework)}`,
        measured: `${ratioAgainst(toNone(framework, 'paygate'), 0.9)}× no auth; peer ${ratio(toNone(framework, 'peer'))}×`,
        pass: toNone(framework, 'paygate') >= 0.9 && paygate.rps > peer.rps,
      });
    }
    const table = markdownTable(['framework', 'route', 'req/s', '× no auth', 'p50 ms', 'p99 ms'], rows, ['l', 'l', 'r', 'r', 'r', 'r']);
    const markdown = [
      '## HTTP',
      '',
      `GET ${PATH} answering \`{"ok":true}\`; each server in its own process on 127.0.0.1, autocannon in another (16 connections, ${headers.length} tokens reused in turn, 1 s warm-up then ${seconds} s; median of ${rounds} round(s); ${pinned}). \`× no auth\` is the median of the rounds' ratios, each to the no-auth run just before.`,
      'Every authenticated server was first shown to answer 200 to a valid token and 401/403 to a tampered, an expired, a missing and an unscoped one; every timed response was a 2xx.',
      '',
      table,
    ].join('\n');
    return { text: table, markdown, targets };
  } finally {
    await jwks.close();
  }
}
