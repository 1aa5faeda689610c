/**
 * `npm run bench`: the verifier benchmarks (raw crypto.verify, the peers, paygate-auth) and the
 * HTTP benchmarks (Express and Fastify: no auth, paygate-auth, the usual peer), in one run, printed
 * as tables and written to bench/RESULTS.md. Runs against the built package (`paygate-auth`).
 *
 * Environment: BENCH_ROUNDS (default 7), BENCH_PAIRS (paired rounds for the ratio targets; default
 * 15), BENCH_BUDGET_MS per sample (300), BENCH_WARMUP_MS of untimed warm-up before each sample
 * (100), BENCH_TOKENS (10000), BENCH_HTTP_SECONDS per burst (1), BENCH_HTTP_ROUNDS (paired HTTP
 * rounds; 20), BENCH_SKIP_HTTP=1, BENCH_SKIP_MICRO=1, BENCH_VERBOSE=1.
 */
import { busyFraction, cpuTimes, describeMachine, loadAverage } from './lib/machine.mjs';
import { microTable, microTargets, targetTable, writeSection } from './lib/report.mjs';
import { versionOf } from './lib/peers.mjs';

const settings = {
  rounds: Number(process.env.BENCH_ROUNDS ?? 7),
  pairs: Number(process.env.BENCH_PAIRS ?? 15),
  budgetMs: Number(process.env.BENCH_BUDGET_MS ?? 300),
  warmUpMs: Number(process.env.BENCH_WARMUP_MS ?? 100),
  tokenCount: Number(process.env.BENCH_TOKENS ?? 10_000),
  httpSeconds: Number(process.env.BENCH_HTTP_SECONDS ?? 1),
};
const log = (line) => console.log(line);
/** A paired case (`row:mode`) as RESULTS.md names it: its row's label and the mode. */
const pairedLabel = (micro, id) => {
  const [row, mode] = id.split(':');
  return `${micro.result[row].label}, ${mode === 'inflight' ? `${micro.lanes} in flight` : mode}`;
};

const machine = describeMachine();
const loadBefore = loadAverage();
const cpuBefore = cpuTimes();
const startedAt = new Date();
const peers = ['fast-jwt', 'aws-jwt-verify', 'jose', 'jsonwebtoken', 'express', 'express-oauth2-jwt-bearer', 'fastify', '@fastify/jwt', 'get-jwks', 'autocannon'];
const versions = peers.map((name) => `${name} ${versionOf(name)}`).join(', ');

log(`paygate-auth ${versionOf('../')} benchmark, ${startedAt.toISOString()}`);
log(`Node ${machine.node} (V8 ${machine.v8}, OpenSSL ${machine.openssl}); ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB; ${machine.platform}`);
log(`load average before (1/5/15 min): ${loadBefore.join(' / ')}`);
log(`peers: ${versions}`);
log('');

const sections = [];
const targets = [];

if (!process.env.BENCH_SKIP_MICRO) {
  const { runMicro } = await import('./micro.mjs');
  log(`verifiers: RS256 2048-bit, ${settings.tokenCount} distinct tokens, ${settings.rounds} rounds of ${settings.budgetMs} ms per case (median reported), each after ${settings.warmUpMs} ms untimed`);
  const micro = await runMicro({ ...settings, log });
  const table = microTable(micro);
  targets.push(...microTargets(micro));
  log('');
  log(table);
  log('');
  sections.push(
    [
      '## Verifiers',
      '',
      `RS256, 2048-bit key, the gateway's claim set; ${micro.tokenCount} distinct tokens; median of ${micro.rounds} rounds of ${micro.budgetMs} ms per case, each sample after a full collection and ${micro.warmUpMs} ms of the same case, untimed, on other tokens (the collection makes V8 recompile; see \`bench/lib/harness.mjs\`).`,
      '**warm**: the same token again; **cold**: distinct tokens cycled (paygate-auth: each token once per verifier, so every one is a cache miss, and by default not kept: a token is cached on its second use);',
      `**in flight**: ${micro.lanes} verifications awaited concurrently (sync verifiers cannot overlap, so theirs equals one at a time).`,
      'paygate-auth is timed two ways: `verify(token)` followed by the route\'s scope check (the peers are handed the bare token too, and check no scope), and `authenticate()` on the `Authorization` header, as every adapter calls it (header parsing, verification, default and route scope policy). A cache hit is re-checked for time, suspension and key.',
      'Ratios are to raw `crypto.verify`, cold, one at a time. Every verifier was shown to refuse a tampered, wrong-issuer, wrong-audience and expired token before it was timed (raw `crypto.verify`: the tampered one).',
      '',
      table,
      '',
      `The ratio targets are also measured paired: ${micro.pairs} rounds in which each paygate-auth sample runs between two samples of raw \`crypto.verify\` one at a time, its ratio taken to their mean; the targets report the median of those ratios (a slow spell of the machine then weighs on both sides of each ratio). Paired medians: ${Object.entries(micro.paired).map(([id, m]) => `${pairedLabel(micro, id)} ${m.median.toFixed(2)}×`).join('; ')}. A cache miss's cost is measured the same way against the same verifier with \`cache: false\`: ${micro.pairs} rounds in which each sample of a verifier with its cache runs between two of it, the cost being one minus the median ratio. "Ahead of every peer" is paired too: ${micro.pairs} rounds in which each paygate-auth sample runs between two of the peer with the highest median in that mode (${['cold', 'inflight'].map((mode) => `${pairedLabel(micro, `${micro.peerPaired[mode].peer}:${mode}`)}: paygate-auth ${micro.peerPaired[mode].median.toFixed(2)}× it`).join('; ')}).`,
    ].join('\n'),
  );
}

if (!process.env.BENCH_SKIP_HTTP) {
  const { runHttp } = await import('./http/run-http.mjs');
  const http = await runHttp({ seconds: settings.httpSeconds, log });
  log('');
  log(http.text);
  log('');
  sections.push(http.markdown);
  targets.push(...(http.targets ?? []));
}

if (targets.length > 0) {
  const table = targetTable(targets);
  log(table);
  const legend = [
    'A target holds when the median of its rounds is on the right side of its line, as the "holds" column says.',
    'Beside each median is an interval that holds the true median with at least the confidence shown: the k-th smallest and the k-th largest of the rounds, k from the binomial law, no shape of the noise assumed (see `bench/lib/statistics.mjs`; rounds on a shared host are not quite independent, so it is a floor on the uncertainty).',
    'Where that interval spans the line, the run cannot tell whether the target holds, whichever side the median fell on.',
  ].join(' ');
  sections.push(['## Targets', '', legend, '', table].join('\n'));
}

const loadAfter = loadAverage();
const busy = busyFraction(cpuBefore, cpuTimes());
log('');
log(`load average after (1/5/15 min): ${loadAfter.join(' / ')}; all cores ${(busy * 100).toFixed(0)} % busy during the run (this benchmark included)`);

const header = [
  `Run ${startedAt.toISOString()} with \`npm run bench\`.`,
  '',
  `- Node ${machine.node} (V8 ${machine.v8}, OpenSSL ${machine.openssl}), ${machine.platform}`,
  `- CPU: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB; libuv thread pool ${machine.threadPool}`,
  `- Load average (1/5/15 min) before: ${loadBefore.join(' / ')}; after: ${loadAfter.join(' / ')}; cores ${(busy * 100).toFixed(0)} % busy during the run`,
  `- ${versions}`,
].join('\n');
writeSection('bench', [header, ...sections].join('\n\n'));
log('written to bench/RESULTS.md');
