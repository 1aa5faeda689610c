/**
 * What `verify()` costs besides the RSA step: `node bench/overhead.mjs` (build first). node:crypto's
 * `publicDecrypt`, `hash` and `verify` are replaced by stand-ins that answer at once with the
 * values of one real token (`publicDecrypt`'s still allocating its result, as the real call does),
 * then 20,000 distinct tokens are verified one at a time, with and without the result cache;
 * prints the best of 15 rounds in µs per token. Only for measuring: the stand-ins accept any
 * signature.
 */
import { offlineVerifier } from './lib/offline-verifier.mjs';
import { ISSUER, createBenchKey, signMany } from './lib/tokens.mjs';

const nodeCrypto = process.getBuiltinModule('node:crypto');
const COUNT = 20_000;
const ROUNDS = 15;

const key = createBenchKey();
const tokens = await signMany(key, ISSUER, COUNT);

const [first] = tokens;
const dot = first.lastIndexOf('.');
const opened = nodeCrypto.publicDecrypt({ key: key.publicKey, padding: nodeCrypto.constants.RSA_NO_PADDING }, Buffer.from(first.slice(dot + 1), 'base64url'));
const digest = nodeCrypto.hash('sha256', first.slice(0, dot), 'binary');
nodeCrypto.publicDecrypt = () => Buffer.from(opened);
nodeCrypto.hash = () => digest;
nodeCrypto.verify = () => true;

async function perToken(cache) {
  const verifier = await offlineVerifier(key.jwk, { cache });
  const started = process.hrtime.bigint();
  for (const token of tokens) await verifier.verify(token);
  return Number(process.hrtime.bigint() - started) / COUNT / 1000;
}

const cached = [];
const uncached = [];
for (let round = 0; round < ROUNDS; round += 1) {
  cached.push(await perToken(true));
  uncached.push(await perToken(false));
}
console.log(
  `verify() without RSA, best of ${ROUNDS} × ${COUNT} distinct tokens: ${Math.min(...cached).toFixed(2)} µs with the result cache, ${Math.min(...uncached).toFixed(2)} µs without`,
);
