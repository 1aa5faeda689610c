/**
 * The verifier benchmarks: raw `crypto.verify`, the peers and paygate-auth, each warm (the same
 * token again), cold (distinct tokens cycled) and cold with 64 verifications in flight, in one
 * process and one run, sampled in rotating rounds. Every sample is warmed up first, untimed, on
 * inputs of its own (see `lib/harness.mjs`).
 */
import { IssuerRegistry, authenticate, createVerifier } from 'paygate-auth';
import { serveJwks } from 'paygate-auth/testing';
import { runPaired, runRounds, sampleInFlight, sampleSequential, sampleSync } from './lib/harness.mjs';
import { median } from './lib/statistics.mjs';
import { qualify } from './lib/qualify.mjs';
import { awsJwtVerifier, fastJwtVerifier, joseVerifier, jsonwebtokenVerifier, rawVerifier } from './lib/peers.mjs';
import { AUDIENCE, ISSUER, PRODUCT, TENANT, claimsFor, createBenchKey, flat, negativeTokens, rawParts, signMany, signToken } from './lib/tokens.mjs';

/** The scope every paygate-auth request is checked for (on top of the default policy). */
const REQUIRED_SCOPE = 'pay:processPayments';
const REQUIRED_SCOPES = Object.freeze([REQUIRED_SCOPE]);
const LANES = 64;
/** Distinct tokens for the warm-ups, never timed: enough for the fastest case's warm-up. */
const WARM_UP_TOKENS = 8000;

/**
 * paygate-auth as the peers are run: `verify(token)`, then the route's scope check on the result
 * (the peers check no scope at all). The sampler runs the check after its `await`, as a route
 * handler runs it after its own: an async function around the pair would add a promise and an
 * `await` per token that no caller pays and that jose, called directly, is not charged (0.07 µs a
 * token alone; about 1 % of the paired cold ratio in place).
 */
const verifyOp = (verifier) => (token) => verifier.verify(token);

function hasScope(auth) {
  if (!auth.scopes.has(REQUIRED_SCOPE)) throw new Error('the token lacks the scope');
}

/** paygate-auth as an adapter runs it: `authenticate()` on the Authorization header, scopes checked. */
const authenticateOp = (verifier) => (authorization) => authenticate(verifier, { authorization, requiredScopes: REQUIRED_SCOPES });

function isAuthenticated(result) {
  if (!result.ok) throw result.error;
}

/** Samples and their median. */
const summary = (samples) => ({ median: median(samples), samples });

/** The peers, by row id. */
const PEER_ROWS = Object.freeze(['fastCached', 'fastUncached', 'aws', 'jose', 'jwt']);

/** The peer whose samples in `mode` have the highest median. */
function bestPeer(samples, mode) {
  return PEER_ROWS.map((id) => ({ id, rate: median(samples.get(`${id}:${mode}`)) })).sort((a, b) => b.rate - a.rate)[0].id;
}

/** `op`, then `check` on its result, as one function: what qualification calls. */
const checked = (op, check) => async (input) => check(await op(input));

/**
 * @param {{ rounds: number, pairs: number, budgetMs: number, warmUpMs: number, tokenCount: number, log: (line: string) => void }} settings
 */
export async function runMicro({ rounds, pairs, budgetMs, warmUpMs, tokenCount, log }) {
  const key = createBenchKey();
  const jwks = await serveJwks(() => ({ keys: [key.jwk] }));
  try {
    const registry = new IssuerRegistry([{ issuer: ISSUER, jwksUri: jwks.url, products: [PRODUCT] }]);
    const base = { registry, audience: AUDIENCE };
    const loader = createVerifier(base);
    const [report] = await loader.warmUp();
    if (!report?.ok) throw new Error(`the JWKS did not load from ${jwks.url}`);
    const snapshot = loader.exportKeys();
    const fresh = async (options = {}) => {
      const verifier = createVerifier({ ...base, keys: snapshot, ...options });
      await verifier.warmUp();
      return verifier;
    };

    let started = performance.now();
    const tokens = await signMany(key, ISSUER, tokenCount);
    const warmUpTokens = await signMany(key, ISSUER, WARM_UP_TOKENS, tokenCount);
    if (new Set([...tokens, ...warmUpTokens]).size !== tokenCount + WARM_UP_TOKENS) throw new Error('the benchmark tokens are not distinct');
    log(`signed ${tokenCount} distinct tokens, and ${WARM_UP_TOKENS} more for the warm-ups, in ${Math.round(performance.now() - started)} ms`);
    const warmToken = signToken(key, claimsFor(ISSUER, 'warm'));
    const bad = negativeTokens(key, ISSUER);
    const asHeader = (token) => flat(`Bearer ${token}`);
    const headers = tokens.map(asHeader);
    const warmUpHeaders = warmUpTokens.map(asHeader);
    const warmHeader = flat(`Bearer ${warmToken}`);
    const badHeaders = Object.fromEntries(Object.entries(bad).map(([kind, token]) => [kind, flat(`Bearer ${token}`)]));
    const parts = tokens.map(rawParts);
    const warmUpParts = warmUpTokens.map(rawParts);
    const warmParts = [rawParts(warmToken)];

    const raw = rawVerifier(key);
    const rows = [];
    const cases = [];
    const qualified = {};
    const addRow = (row) => {
      rows.push(row);
      for (const mode of ['warm', 'cold', 'inflight']) {
        if (row[mode] !== undefined) cases.push({ id: `${row.id}:${mode}`, ...row[mode] });
      }
    };
    /**
     * A case that runs `sampler(op, …)`: warmed up on `warmUpInputs` (each at most once when
     * `distinct`), then timed on `inputs` from the round's own offset.
     */
    const timed = (sampler, op, inputs, warmUpInputs, { distinct = true, ...extra } = {}) => ({
      warmUp: () => sampler(op, warmUpInputs, { budgetMs: warmUpMs, maxOps: distinct ? warmUpInputs.length : Infinity, ...extra }),
      sample: (round) => sampler(op, inputs, { budgetMs, offset: round * 1237, ...extra }),
    });
    /** The same input again, warm-up included. */
    const warm = (sampler, op, input, extra = {}) => timed(sampler, op, [input], [input], { distinct: false, ...extra });

    // Raw crypto.verify: signature only, over bytes prepared in advance.
    qualified.raw = await qualify('crypto.verify', (p) => raw.sync(p), warmParts[0], { tampered: rawParts(bad.tampered) });
    addRow({
      id: 'raw',
      label: 'node:crypto `crypto.verify`, prepared KeyObject (the RSA step alone)',
      warm: warm(sampleSync, raw.sync, warmParts[0]),
      cold: timed(sampleSync, raw.sync, parts, warmUpParts),
      inflight: timed(sampleInFlight, raw.pooled, parts, warmUpParts, { lanes: LANES }),
    });

    const syncPeer = (id, label, verify) => ({
      id,
      label,
      warm: warm(sampleSync, verify, warmToken),
      cold: timed(sampleSync, verify, tokens, warmUpTokens),
      inflight: timed(sampleInFlight, verify, tokens, warmUpTokens, { lanes: LANES }),
    });
    const asyncPeer = (id, label, verify) => ({
      id,
      label,
      warm: warm(sampleSequential, verify, warmToken),
      cold: timed(sampleSequential, verify, tokens, warmUpTokens),
      inflight: timed(sampleInFlight, verify, tokens, warmUpTokens, { lanes: LANES }),
    });

    const fastCached = fastJwtVerifier(key, ISSUER, true);
    const fastUncached = fastJwtVerifier(key, ISSUER, false);
    const aws = awsJwtVerifier(key, ISSUER);
    const jose = await joseVerifier(key, ISSUER);
    const jwt = jsonwebtokenVerifier(key, ISSUER);
    qualified.fastCached = await qualify('fast-jwt (cache)', fastCached, warmToken, bad);
    qualified.fastUncached = await qualify('fast-jwt', fastUncached, warmToken, bad);
    qualified.aws = await qualify('aws-jwt-verify', aws, warmToken, bad);
    qualified.jose = await qualify('jose', jose, warmToken, bad);
    qualified.jwt = await qualify('jsonwebtoken', jwt, warmToken, bad);
    addRow(syncPeer('fastCached', 'fast-jwt, PEM key, `cache: true`', fastCached));
    addRow(syncPeer('fastUncached', 'fast-jwt, PEM key, no cache', fastUncached));
    addRow(syncPeer('aws', 'aws-jwt-verify `verifySync`, hydrated JWKS', aws));
    addRow(asyncPeer('jose', 'jose `jwtVerify`, imported JWK (WebCrypto)', jose));
    addRow(syncPeer('jwt', 'jsonwebtoken, PEM key', jwt));

    // paygate-auth: verify() + the scope check (as the peers are called), and authenticate() as
    // every adapter calls it (the Authorization header in, the default and route scope policy).
    const warmVerifier = await fresh();
    const offVerifier = await fresh({ cache: false });
    qualified.paygate = await qualify('paygate-auth', checked(verifyOp(warmVerifier), hasScope), warmToken, bad);
    qualified.paygateOff = await qualify('paygate-auth (cache off)', checked(verifyOp(offVerifier), hasScope), warmToken, bad);
    qualified.paygateAuthenticate = await qualify(
      'paygate-auth authenticate()',
      checked(authenticateOp(warmVerifier), isAuthenticated),
      warmHeader,
      badHeaders,
    );
    /**
     * Distinct tokens, each seen once by a verifier built for the sample (in its warm-up, which
     * gives it other tokens, each once): every timed one is a miss.
     */
    const coldSample = (makeOp, inputs, warmUpInputs, options, sampler, extra) => {
      let op;
      return {
        warmUp: async () => {
          op = makeOp(await fresh(options));
          await sampler(op, warmUpInputs, { budgetMs: warmUpMs, maxOps: warmUpInputs.length, ...extra });
        },
        sample: (round) => sampler(op, inputs, { budgetMs, maxOps: tokenCount, offset: round * 1237, ...extra }),
      };
    };
    /**
     * A paygate-auth row: `makeOp(verifier)` with `check` on each result, warm on `verifier`'s
     * cache, cold and in flight on a verifier per sample built with `options`.
     */
    const paygateRow = (id, label, { verifier, options, makeOp, check, warmInput, inputs, warmUpInputs }) => ({
      id,
      label,
      warm: warm(sampleSequential, makeOp(verifier), warmInput, { check }),
      cold: coldSample(makeOp, inputs, warmUpInputs, options, sampleSequential, { check }),
      inflight: coldSample(makeOp, inputs, warmUpInputs, options, sampleInFlight, { lanes: LANES, check }),
    });
    const byToken = { makeOp: verifyOp, check: hasScope, warmInput: warmToken, inputs: tokens, warmUpInputs: warmUpTokens };
    addRow(paygateRow('paygate', 'paygate-auth `verify()` + scope check', { ...byToken, verifier: warmVerifier, options: {} }));
    addRow(
      paygateRow('paygateOff', 'paygate-auth `verify()` + scope check, `cache: false`', {
        ...byToken,
        verifier: offVerifier,
        options: { cache: false },
      }),
    );
    addRow(
      paygateRow('paygateFirstUse', "paygate-auth `verify()` + scope check, `cacheAdmission: 'first-use'` (every token kept)", {
        ...byToken,
        verifier: await fresh({ cacheAdmission: 'first-use' }),
        options: { cacheAdmission: 'first-use' },
      }),
    );
    addRow(
      paygateRow('paygateAuthenticate', 'paygate-auth `authenticate()` (Authorization header, verify, scope policy)', {
        verifier: warmVerifier,
        options: {},
        makeOp: authenticateOp,
        check: isAuthenticated,
        warmInput: warmHeader,
        inputs: headers,
        warmUpInputs: warmUpHeaders,
      }),
    );

    // JIT warm-up of every case, untimed.
    for (const c of cases) {
      await c.warmUp(0);
      await c.sample(0);
    }

    started = performance.now();
    const samples = await runRounds(cases, rounds, (c, round, rate) => {
      if (process.env.BENCH_VERBOSE) log(`  round ${round + 1} ${c.id.padEnd(20)} ${Math.round(rate)} ops/s`);
    });
    log(`timed ${cases.length} cases × ${rounds} rounds in ${Math.round((performance.now() - started) / 1000)} s`);

    // The targets' ratios again, each paygate-auth sample between two raw samples.
    const byId = (id) => cases.find((c) => c.id === id);
    const pairedIds = ['paygate:cold', 'paygate:inflight', 'paygateAuthenticate:cold', 'paygateAuthenticate:inflight'];
    started = performance.now();
    const paired = await runPaired(byId('raw:cold'), pairedIds.map(byId), pairs);
    log(`paired ${pairedIds.length} cases with raw \`crypto.verify\` × ${pairs} rounds in ${Math.round((performance.now() - started) / 1000)} s`);

    // A miss's cost, paired directly: each sample of a verifier with its cache runs between two
    // samples of the same verifier with `cache: false`, one at a time and in flight.
    started = performance.now();
    const missPaired = {};
    for (const mode of ['cold', 'inflight']) {
      const withCache = ['paygate', 'paygateFirstUse'].map((id) => byId(`${id}:${mode}`));
      for (const [id, list] of await runPaired(byId(`paygateOff:${mode}`), withCache, pairs)) missPaired[id] = summary(list);
    }
    log(`paired the cached verifiers with \`cache: false\` × ${pairs} rounds in ${Math.round((performance.now() - started) / 1000)} s`);

    // "Ahead of every peer", paired too: each paygate-auth sample between two of the peer with the
    // highest median in that mode, so that the comparison rests on samples taken side by side.
    started = performance.now();
    const peerPaired = {};
    for (const mode of ['cold', 'inflight']) {
      const peer = bestPeer(samples, mode);
      const [[, list]] = await runPaired(byId(`${peer}:${mode}`), [byId(`paygate:${mode}`)], pairs);
      peerPaired[mode] = { peer, ...summary(list) };
    }
    log(`paired paygate-auth with the best peer of each mode × ${pairs} rounds in ${Math.round((performance.now() - started) / 1000)} s`);

    const result = {};
    for (const row of rows) {
      result[row.id] = { label: row.label };
      for (const mode of ['warm', 'cold', 'inflight']) {
        const list = samples.get(`${row.id}:${mode}`);
        if (list) result[row.id][mode] = summary(list);
      }
    }
    const pairedMedians = Object.fromEntries([...paired].map(([id, list]) => [id, summary(list)]));
    return { rows: rows.map((row) => row.id), result, paired: pairedMedians, missPaired, peerPaired, pairs, qualified, tokenCount, rounds, budgetMs, warmUpMs, lanes: LANES, tenant: TENANT };
  } finally {
    await jwks.close();
  }
}
