/**
 * One paygate-auth case alone, for profiling: `node --cpu-prof bench/profile.mjs <case> [seconds]`
 * (build first). Prints wall-clock ops/s and the process's CPU time per operation, which a busy
 * machine disturbs less than wall time.
 *
 * Cases: warm, cold, cold-off, inflight, inflight-off, verify-cold (verify() without the header
 * and scope steps), raw (crypto.verify alone).
 */
import { authenticate } from 'paygate-auth';
import { sampleInFlight, sampleSequential, sampleSync } from './lib/harness.mjs';
import { offlineVerifier } from './lib/offline-verifier.mjs';
import { rawVerifier } from './lib/peers.mjs';
import { ISSUER, claimsFor, createBenchKey, flat, rawParts, signMany, signToken } from './lib/tokens.mjs';

const [name = 'cold', seconds = '5'] = process.argv.slice(2);
const count = Number(process.env.BENCH_TOKENS ?? 10_000);
const key = createBenchKey();
const fresh = (options = {}) => {
  const extra = process.env.BENCH_CACHE_MAX ? { cacheMaxEntries: Number(process.env.BENCH_CACHE_MAX) } : {};
  return offlineVerifier(key.jwk, { ...extra, ...options });
};
const tokens = await signMany(key, ISSUER, count);
const headers = tokens.map((token) => flat(`Bearer ${token}`));
const warm = flat(`Bearer ${signToken(key, claimsFor(ISSUER, 'warm'))}`);
const scopes = Object.freeze(['pay:processPayments']);
const viaAuthenticate = (verifier) => (authorization) => authenticate(verifier, { authorization, requiredScopes: scopes });
/** Run by the sampler on each result, after its `await` (see `lib/harness.mjs`). */
const check = (result) => {
  if (!result.ok) throw result.error;
};

async function sample(budgetMs) {
  switch (name) {
    case 'warm': {
      const op = viaAuthenticate(await fresh());
      return sampleSequential(op, [warm], { budgetMs, check });
    }
    case 'cold':
    case 'cold-off':
      return sampleSequential(viaAuthenticate(await fresh(name === 'cold' ? {} : { cache: false })), headers, { budgetMs, maxOps: count, check });
    case 'inflight':
    case 'inflight-off':
      return sampleInFlight(viaAuthenticate(await fresh(name === 'inflight' ? {} : { cache: false })), headers, { budgetMs, maxOps: count, check });
    case 'verify-cold': {
      const verifier = await fresh();
      return sampleSequential((token) => verifier.verify(token), tokens, { budgetMs, maxOps: count });
    }
    case 'raw': {
      const parts = tokens.map(rawParts);
      return sampleSync(rawVerifier(key).sync, parts, { budgetMs });
    }
    default:
      throw new Error(`unknown case ${name}`);
  }
}

await sample(300);
let ops = 0;
let ms = 0;
const cpuBefore = process.cpuUsage();
const end = performance.now() + Number(seconds) * 1000;
while (performance.now() < end) {
  const s = await sample(Math.max(50, end - performance.now()));
  ops += s.ops;
  ms += s.ms;
}
const cpu = process.cpuUsage(cpuBefore);
console.log(
  `${name}: ${Math.round((ops * 1000) / ms)} ops/s wall; ${((cpu.user + cpu.system) / ops).toFixed(2)} µs CPU per op (${ops} ops)`,
);
