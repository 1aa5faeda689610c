/**
 * `npm run load`: the example gateway under load, on 127.0.0.1, for a bounded time.
 *
 * Starts `examples/gateway/server.mjs` as a child process (its demo key in a fresh state
 * directory), mints tokens with the same key in this process, and drives the gateway with
 * autocannon: valid, expired, forged, wrong-tenant and wrong-scope tokens against GET /info/,
 * POST /payment-links/ with Idempotency-Key values drawn from a pool (so keys repeat), conflicting
 * and invalid bodies, and reads of one's own and another tenant's links. Then it settles every
 * key, reads every link back, and counts the gateway's request log.
 *
 * Checks (the exit status is 1 when one fails): no 5xx, in the responses or in the gateway's log;
 * no expired, forged, wrong-tenant or wrong-scope request accepted, each answered as its class
 * must be; no connection errors or timeouts; exactly one link per (tenant, Idempotency-Key), every
 * replay carrying its id, each link readable by its tenant and by no other; the gateway's heap,
 * after a full GC, grows by at most --max-heap-growth MiB from the end of the warm-up to the end.
 * See examples/load/settings.mjs for the flags.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { loadDemoKey } from '../gateway/demo.mjs';
import { startGateway } from './gateway-process.mjs';
import { checkLines, classTable, joinCounts, memoryTable } from './report.mjs';
import { USAGE, readSettings } from './settings.mjs';
import { mintTokens } from './tokens.mjs';
import { CLASSES, createTraffic } from './traffic.mjs';
import { readRequestLog, verifyLinks } from './verify.mjs';

const log = (line = '') => console.log(line);

let settings;
try {
  settings = readSettings();
} catch (error) {
  console.error(`${error.message}\n${USAGE}`);
  process.exit(2);
}
if (settings.help) {
  log(USAGE);
  process.exit(0);
}

const stateDir = mkdtempSync(join(tmpdir(), 'paygate-load-'));
process.env.PAYGATE_EXAMPLE_STATE_DIR = stateDir;
let gateway;

/** Stops the gateway and removes the state directory (kept with --keep or after a failed check). */
async function cleanUp(keep) {
  if (gateway !== undefined) await gateway.stop();
  if (keep) log(`state directory kept: ${stateDir} (demo key, gateway.log)`);
  else rmSync(stateDir, { recursive: true, force: true });
}

// Bounded in time whatever happens: warm-up, run, settling and a minute of margin.
const deadline = setTimeout(
  async () => {
    console.error('load run: over its time bound; stopping the gateway');
    await cleanUp(true);
    process.exit(1);
  },
  (settings.warmup + settings.seconds + 90) * 1000,
);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await cleanUp(settings.keep);
    process.exit(130);
  });
}

/** Drives the gateway for `seconds` with the traffic mix; resolves autocannon's result. */
function drive(url, traffic, seconds, budget) {
  const instance = autocannon({
    url,
    connections: settings.connections,
    duration: seconds,
    timeout: 10,
    pipelining: 1,
    requests: [
      {
        setupRequest(request, context) {
          const described = traffic.request();
          context.described = described;
          return {
            ...request,
            method: described.method,
            path: described.path,
            headers: { ...described.headers },
            body: described.body ?? '',
          };
        },
        onResponse(status, body, context, headers) {
          traffic.record(context.described, status, body, headers);
        },
      },
    ],
  });
  let responses = 0;
  instance.on('response', () => {
    if (++responses >= budget.left) instance.stop();
  });
  return instance.then((result) => {
    budget.left -= responses;
    return result;
  });
}

async function main() {
  log(
    `paygate-auth load run: ${settings.seconds} s after a ${settings.warmup} s warm-up, ${settings.connections} connections, ${settings.keys} Idempotency-Key values per tenant, 127.0.0.1`,
  );
  log(`Node ${process.version}; ${new Date().toISOString()}`);
  const { key } = await loadDemoKey();
  const tokens = await mintTokens(key, { users: 32 });
  gateway = await startGateway({ stateDir });
  log(`gateway ${gateway.url} (pid ${gateway.pid}), started as: node examples/gateway/server.mjs`);
  const mix = Object.entries(CLASSES)
    .map(([name, { weight }]) => `${name} ${weight}%`)
    .join(', ');
  log(`mix: ${mix}`);
  log('');

  const traffic = createTraffic(tokens, { keys: settings.keys });
  const budget = { left: settings.maxRequests };
  if (settings.warmup > 0) await drive(gateway.url, traffic, settings.warmup, budget);
  const before = await gateway.memory({ gc: true });
  const linksAtBaseline = new Set([...traffic.creations.values()].filter((entry) => entry.id !== null).map((entry) => entry.id)).size;
  const run = drive(gateway.url, traffic, settings.seconds, budget);
  const midway = new Promise((resolve) => setTimeout(resolve, settings.seconds * 500)).then(() => gateway.memory({ gc: true }));
  const result = await run;
  const middle = await midway;
  // Let the requests cut off by the stop finish on the gateway before settling their keys.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const links = await verifyLinks(gateway.url, traffic, tokens);
  const after = await gateway.memory({ gc: true });
  const running = gateway.running();
  const stopped = await gateway.stop();
  const requestLog = await readRequestLog(gateway.logFile);

  const counts = [...traffic.tally.values()];
  const responses = counts.reduce((sum, entry) => sum + entry.count, 0);
  const serverErrors = counts.reduce(
    (sum, entry) => sum + [...entry.statuses].filter(([status]) => status >= 500).reduce((n, [, c]) => n + c, 0),
    0,
  );
  const unexpected = counts.reduce((sum, entry) => sum + entry.unexpected, 0);
  const wronglyAccepted = counts.reduce((sum, entry) => sum + entry.accepted, 0);
  const refused = [...traffic.tally].filter(([name]) => CLASSES[name].refused).reduce((sum, [, entry]) => sum + entry.count, 0);
  const created = links.createdDuringRun + links.createdWhenSettling + links.createdUnseen;
  const heapGrowth = after.heapUsed - before.heapUsed;
  const expectedLogged = responses + links.requests;
  const unanswered = traffic.inFlight.size;

  log(
    `measured run: ${result.requests.total} responses in ${result.duration} s, ${Math.round(result.requests.average)} req/s average; latency p50 ${result.latency.p50} ms, p97.5 ${result.latency.p97_5} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms`,
  );
  log(`all phases: ${responses} responses counted by class (warm-up included); ${unanswered} requests cut off when a phase stopped`);
  log('');
  log(classTable(traffic.tally));
  log('');
  log(
    `Idempotency-Key: ${links.keys} (tenant, key) pairs sent; answers seen under load: ${links.createdDuringRun} links created, ${links.replayedDuringRun} replays, ${links.inUseDuringRun} 409 while the key was in use`,
  );
  log(
    `settling every key again: ${links.settledAsReplay} replays of the link already made (${links.createdUnseen} of them made by a request cut off at a phase's end), ${links.createdWhenSettling} created, ${links.settlingFailures.length} failures`,
  );
  log(
    `links: ${created} created, ${links.linkIds.size} distinct ids, ${links.keys} distinct (tenant, key) pairs; read back: ${links.readBack.own200} × 200 by their tenant, ${links.readBack.other404} × 404 by the other tenant`,
  );
  log(
    `gateway request log: ${requestLog.requests} lines (${joinCounts(requestLog.byStatus)}); client-side ${expectedLogged} answered, ${unanswered} cut off`,
  );
  log('');
  log(
    memoryTable([
      ['after warm-up', before],
      ['mid-run', middle],
      ['after run', after],
    ]),
  );
  const newLinks = links.linkIds.size - linksAtBaseline;
  log(
    `heap used grew ${(heapGrowth / 1024 / 1024).toFixed(1)} MiB over ${result.requests.total} requests, while ${newLinks} links were stored (${(heapGrowth / Math.max(1, newLinks) / 1024).toFixed(1)} KiB per link, all else included)`,
  );
  log('');

  const checks = [
    ['no 5xx answered', serverErrors === 0, `${serverErrors} of ${responses}`],
    [
      'no 5xx or internal error in the gateway log',
      requestLog.serverErrors === 0 && requestLog.internalErrors === 0,
      `${requestLog.serverErrors} 5xx, ${requestLog.internalErrors} internal_error`,
    ],
    [
      'no expired, forged, wrong-tenant, wrong-scope, conflicting or invalid request accepted',
      wronglyAccepted === 0,
      `${wronglyAccepted} of ${refused}`,
    ],
    ['every request answered as its class must be', unexpected === 0, `${unexpected} unexpected`],
    [
      'no connection errors or timeouts',
      result.errors === 0 && result.timeouts === 0,
      `${result.errors} errors, ${result.timeouts} timeouts`,
    ],
    [
      'links created = distinct (tenant, Idempotency-Key) pairs = distinct link ids',
      links.settlingFailures.length === 0 && links.keysWithSeveralIds === 0 && created === links.keys && links.linkIds.size === links.keys,
      `${created} / ${links.keys} / ${links.linkIds.size}${links.settlingFailures.length > 0 ? `; ${links.settlingFailures.slice(0, 3).join('; ')}` : ''}`,
    ],
    [
      'every link read back by its tenant, and by no other',
      links.readBack.own200 === links.linkIds.size && links.readBack.other404 === links.linkIds.size,
      `${links.readBack.ownOther} own failures, ${links.readBack.otherOther} other-tenant answers not 404`,
    ],
    [
      'the gateway logged every request answered',
      requestLog.requests >= expectedLogged && requestLog.requests <= expectedLogged + unanswered,
      `${requestLog.requests} logged for ${expectedLogged} answered + up to ${unanswered} cut off`,
    ],
    [
      `heap growth after a full GC at most ${settings.maxHeapGrowthMiB} MiB`,
      heapGrowth <= settings.maxHeapGrowthMiB * 1024 * 1024,
      `${(heapGrowth / 1024 / 1024).toFixed(1)} MiB`,
    ],
    ['the gateway ran throughout and stopped on SIGTERM', running && stopped.code === 0, `exit ${stopped.code ?? stopped.signal}`],
  ];
  log(checkLines(checks));
  const failed = checks.filter(([, passed]) => !passed).length;
  const stderr = gateway.stderr().trim();
  if (stderr !== '') log(`\ngateway stderr:\n${stderr.slice(0, 4000)}`);
  log('');
  log(failed === 0 ? 'load run: all checks passed' : `load run: ${failed} check(s) failed`);
  await cleanUp(settings.keep || failed > 0);
  return failed === 0 ? 0 : 1;
}

main()
  .then((code) => {
    clearTimeout(deadline);
    process.exitCode = code;
  })
  .catch(async (error) => {
    clearTimeout(deadline);
    console.error(error);
    await cleanUp(true);
    process.exitCode = 1;
  });
