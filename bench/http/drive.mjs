/**
 * The load generator, in its own process (forked by run-http.mjs). It first receives
 * `{ kind: 'pin', cpu }` and pins itself to that CPU when given; then, for each `{ kind: 'burst',
 * url, path, headers, connections, seconds }` it receives, it drives the URL with autocannon for
 * `seconds`, cycling through the given Authorization headers as clients reusing their tokens
 * would, and answers with that burst's figures. It runs until its parent disconnects.
 */
import { execFileSync } from 'node:child_process';
import autocannon from 'autocannon';

function run(options) {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

async function burst({ url, path, headers, connections, seconds }) {
  const requests = headers.map((authorization) => ({ method: 'GET', path, headers: { authorization } }));
  const started = performance.now();
  const result = await run({ url, connections, pipelining: 1, requests, duration: seconds });
  const elapsedMs = performance.now() - started;
  return {
    requestsPerSecond: (result.requests.total * 1000) / elapsedMs,
    total: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

process.on('message', async (message) => {
  try {
    if (message.kind === 'pin') {
      if (message.cpu !== undefined) execFileSync('taskset', ['-p', '-c', message.cpu, String(process.pid)], { stdio: 'ignore' });
      process.send({ ok: true });
    } else {
      process.send({ ok: true, ...(await burst(message)) });
    }
  } catch (error) {
    process.send({ ok: false, error: String(error?.stack ?? error) });
  }
});
process.once('disconnect', () => process.exit(0));
