/**
 * `node bench/jwks-many-keys.mjs` (after `npm run build`): what one JWKS download costs when the
 * endpoint serves as many valid-looking RSA keys as fit in `jwksMaxBytes` (256 KiB), all new at
 * each download (so none is reused from the held set), as a hostile integration's endpoint could
 * at every unknown-`kid` refetch (at most one per `jwksCooldown`, 30 s, per issuer). For 2048-,
 * 4096- and 8192-bit moduli: keys per set, the process's CPU per download and the longest
 * event-loop stall (the key imports of the default Node engine are synchronous), medians of
 * BENCH_ROUNDS (10) downloads through `verifier.refresh()`, over HTTP on loopback. Prints; writes
 * nothing. The verifier takes `jwksMaxKeys: 1000`, the most it allows (by default a set of more
 * than 100 entries is a failed download, `too_many_keys`): the cost an operator can opt into.
 */
import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createVerifier } from '../dist/index.js';
import { serveJwks } from '../dist/testing/index.js';
import { machineLine, median } from './lib/report.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const MAX_BYTES = 256 * 1024;
const ISSUER = 'https://many-keys.bench.example';

/** As many RSA public keys of `bits` (odd modulus, top bit set) as fit in MAX_BYTES of JSON. */
function keySet(bits, round) {
  const bytes = bits / 8;
  const keys = [];
  let size = '{"keys":[]}'.length;
  for (let index = 0; ; index += 1) {
    const n = randomBytes(bytes);
    n[0] |= 0x80;
    n[bytes - 1] |= 1;
    const key = { kty: 'RSA', kid: `k-${round}-${index}`, use: 'sig', alg: 'RS256', e: 'AQAB', n: n.toString('base64url') };
    const added = JSON.stringify(key).length + 1;
    if (size + added > MAX_BYTES) return { keys };
    size += added;
    keys.push(key);
  }
}

console.log(machineLine());
console.log('| modulus | keys per set | CPU per download (ms) | longest event-loop stall, median (max) (ms) |');
console.log('|---|---|---|---|');
for (const bits of [2048, 4096, 8192]) {
  let round = 0;
  const server = await serveJwks(() => {
    round += 1;
    return keySet(bits, round);
  });
  const verifier = createVerifier({
    registry: [{ issuer: ISSUER, jwksUri: server.url, products: ['bench'] }],
    audience: 'bench',
    jwksMaxKeys: 1000,
  });
  const cpu = [];
  const stalls = [];
  let keys = 0;
  await verifier.refresh(ISSUER);
  for (let index = 0; index < ROUNDS; index += 1) {
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    const before = process.cpuUsage();
    keys = (await verifier.refresh(ISSUER)).keys;
    const used = process.cpuUsage(before);
    loop.disable();
    cpu.push((used.user + used.system) / 1000);
    stalls.push(loop.max / 1e6);
  }
  await server.close();
  console.log(`| ${bits} | ${keys} | ${median(cpu).toFixed(0)} | ${median(stalls).toFixed(0)} (${Math.max(...stalls).toFixed(0)}) |`);
}
