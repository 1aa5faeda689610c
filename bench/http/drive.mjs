/**
 * The load generator, in its own process (forked by run-http.mjs): receives `{ url, headers,
 * connections, seconds, warmupSeconds, cpu }` over IPC, pins itself to `cpu` when given, drives
 * the URL with autocannon (a warm-up run, then the measured run) cycling through the given
 * Authorization headers as clients reusing their tokens would, and answers with the measured
 * run's figures.
 */
import { execFileSync } from 'node:child_process';
import autocannon from 'autocannon';

function run(options) {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

process.once('message', async ({ url, path, headers, connections, seconds, warmupSeconds, cpu }) => {
  try {
    if (cpu !== undefined) execFileSync('taskset', ['-p', '-c', cpu, String(process.pid)], { stdio: 'ignore' });
    const requests = headers.map((authorization) => ({ method: 'GET', path, headers: { authorization } }));
    const base = { url, connections, pipelining: 1, requests };
    if (warmupSeconds > 0) await run({ ...base, duration: warmupSeconds });
    const result = await run({ ...base, duration: seconds });
    process.send({
      ok: true,
      requestsPerSecond: result.requests.average,
      total: result.requests.total,
      p50: result.latency.p50,
      p99: result.latency.p99,
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      seconds: result.duration,
    });
  } catch (error) {
    process.send({ ok: false, error: String(error?.stack ?? error) });
  }
});
