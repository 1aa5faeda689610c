/**
 * The cases `npm run bench:instructions` counts, configured as `npm run bench` times them. Each
 * makes, from the key, `{ op, async, input }`: `op(input)` verifies one token (awaited when
 * `async`); `input` is `token` or `parts` (raw `crypto.verify`'s prepared bytes). `slow` cases
 * count a quarter of the verifications. `lanes` cases keep that many verifications in flight
 * (distinct tokens, each lane awaiting its own), as `npm run bench` does.
 */
import { createTelemetry } from 'paygate-auth/otel';
import { awsJwtVerify, fastJwtVerify, joseVerify, paygateVerifier, rawVerify, rawVerifyCallback } from '../lib/verifiers.mjs';

const paygate = async (key) => {
  const verifier = await paygateVerifier(key.jwk);
  return { op: (token) => verifier.verify(token), async: true, input: 'token' };
};

/** Through paygate-auth/otel with no OpenTelemetry SDK registered: what an app pays that has the instrumentation on and no SDK. */
const paygateOtel = async (key) => {
  const telemetry = createTelemetry();
  const verifier = await paygateVerifier(key.jwk, {}, (options) => telemetry.createVerifier(options));
  return { op: (token) => verifier.verify(token), async: true, input: 'token' };
};

/** With an `onEvent` listener that does nothing: the cost of the verifier's events themselves. */
const paygateEvents = async (key) => {
  const verifier = await paygateVerifier(key.jwk, { onEvent: () => {} });
  return { op: (token) => verifier.verify(token), async: true, input: 'token' };
};
const sync = (op) => ({ op, async: false, input: 'token' });

const COLD = 'cold, one at a time';
const WARM = 'warm (cached token)';
export const IN_FLIGHT = '64 in flight';
const LANES = 64;

export const CASES = Object.freeze([
  {
    id: 'raw',
    group: COLD,
    label: '`crypto.verify`, KeyObject built once',
    role: 'baseline',
    make: (key) => ({ op: rawVerify(key), async: false, input: 'parts' }),
  },
  { id: 'paygate', group: COLD, label: 'paygate-auth `verify()`', role: 'ours', make: paygate },
  {
    id: 'fast-jwt',
    group: COLD,
    label: 'fast-jwt, no cache',
    role: 'peer',
    make: (key) => sync(fastJwtVerify(key, false)),
  },
  {
    id: 'aws',
    group: COLD,
    label: 'aws-jwt-verify `verifySync`',
    role: 'peer',
    make: (key) => sync(awsJwtVerify(key)),
  },
  {
    id: 'jose',
    group: COLD,
    label: 'jose `jwtVerify`',
    role: 'peer',
    slow: true,
    make: async (key) => ({ op: await joseVerify(key), async: true, input: 'token' }),
  },
  { id: 'paygate-warm', group: WARM, label: 'paygate-auth `verify()`', role: 'ours', baseline: 'raw', make: paygate },
  {
    id: 'paygate-warm-otel',
    group: WARM,
    label: 'paygate-auth `verify()`, paygate-auth/otel without an SDK',
    role: 'ours',
    baseline: 'raw',
    make: paygateOtel,
  },
  {
    id: 'paygate-warm-events',
    group: WARM,
    label: 'paygate-auth `verify()`, an `onEvent` listener doing nothing',
    role: 'ours',
    baseline: 'raw',
    make: paygateEvents,
  },
  {
    id: 'fast-jwt-warm',
    group: WARM,
    label: 'fast-jwt, `cache: true`',
    role: 'peer',
    baseline: 'raw',
    make: (key) => sync(fastJwtVerify(key, true)),
  },
  {
    id: 'raw-inflight',
    group: IN_FLIGHT,
    label: '`crypto.verify` callback form',
    role: 'baseline',
    lanes: LANES,
    make: (key) => ({ op: rawVerifyCallback(key), async: true, input: 'parts' }),
  },
  { id: 'paygate-inflight', group: IN_FLIGHT, label: 'paygate-auth `verify()`', role: 'ours', lanes: LANES, make: paygate },
]);
