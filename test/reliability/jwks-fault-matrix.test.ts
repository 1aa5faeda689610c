/**
 * The JWKS fault matrix: each fault of a real endpoint on 127.0.0.1, with no keys cached and with
 * keys cached. For each: what verification answers, that failures back off instead of storming the
 * endpoint, that at most one download per issuer is in flight, and that nothing is left as an
 * unhandled rejection. Fake clock for max-age, back-off and the stale window; real time for the
 * (short) network timeout.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { type AuthContext, AuthError, type JwksFailureReason, type Verifier, toErrorResponse } from '../../src/index.js';
import { type TestIssuer, createTestIssuer } from '../../src/testing/index.js';
import { fakeClock } from '../support/jwks-clock.js';
import { type FaultyJwks, type JwksFault, serveFaultyJwks } from '../support/jwks-fault-server.js';
import { authRejection } from '../support/jwks-rejection.js';
import { LOADED_MARGIN_MS } from '../support/loaded-machine.js';
import { verifierFixture } from '../support/verifier-fixture.js';

const AUDIENCE = 'https://payments.test';
const MAX_AGE = 600;
const STALE_WINDOW = 86_400;
const CONCURRENT = 20;
/**
 * The verifier's `jwksTimeout`, in seconds: every download of the file has this long, a good one on
 * a loaded machine included; the slow answer comes that much later again.
 */
const JWKS_TIMEOUT = LOADED_MARGIN_MS / 1000;

interface FaultCase {
  readonly fault: JwksFault;
  readonly title: string;
  /** The `reason` of the failed download's `jwks_fetch` event. */
  readonly reason: JwksFailureReason;
  /** Requests one download makes (a redirect is not followed). */
  readonly requestsPerDownload: number;
  /** The `Retry-After` of the 503 after the first failure. */
  readonly retryAfter: string;
}

const CASES: readonly FaultCase[] = [
  {
    fault: 'unreachable',
    title: 'port closed (connection refused)',
    reason: 'network',
    requestsPerDownload: 0,
    retryAfter: '1',
  },
  {
    fault: 'slow',
    title: 'answer slower than jwksTimeout',
    reason: 'timeout',
    requestsPerDownload: 1,
    retryAfter: '1',
  },
  { fault: 'status_500', title: '500', reason: 'status', requestsPerDownload: 1, retryAfter: '1' },
  {
    fault: 'status_429',
    title: '429 with Retry-After: 30',
    reason: 'status',
    requestsPerDownload: 1,
    retryAfter: '30',
  },
  { fault: 'invalid_json', title: 'invalid JSON', reason: 'invalid_json', requestsPerDownload: 1, retryAfter: '1' },
  { fault: 'no_keys', title: 'JSON without keys', reason: 'no_keys', requestsPerDownload: 1, retryAfter: '1' },
  {
    fault: 'oversized',
    title: 'endless body over jwksMaxBytes (streamed)',
    reason: 'too_large',
    requestsPerDownload: 1,
    retryAfter: '1',
  },
  {
    fault: 'redirect_loop',
    title: 'redirect (none followed by default)',
    reason: 'redirects',
    requestsPerDownload: 1,
    retryAfter: '1',
  },
  {
    fault: 'reset_mid_body',
    title: 'connection reset mid-body',
    reason: 'network',
    requestsPerDownload: 1,
    retryAfter: '1',
  },
  {
    fault: 'compression_bomb',
    title: 'endless gzip bomb (about 1000 decoded bytes per byte sent)',
    reason: 'too_large',
    requestsPerDownload: 1,
    retryAfter: '1',
  },
  {
    fault: 'unknown_encoding',
    title: 'unknown Content-Encoding',
    reason: 'content_encoding',
    requestsPerDownload: 1,
    retryAfter: '1',
  },
  {
    fault: 'trickle_headers',
    title: 'headers trickled a byte per 100 ms (slowloris)',
    reason: 'timeout',
    requestsPerDownload: 1,
    retryAfter: '1',
  },
  {
    fault: 'trickle_body',
    title: 'body trickled a byte per 100 ms',
    reason: 'timeout',
    requestsPerDownload: 1,
    retryAfter: '1',
  },
];

const clock = fakeClock();
let issuer: TestIssuer;
let faulty: FaultyJwks;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
/** What each case answered, printed as the README's table once the file has run. */
const observed = new Map<string, { cold?: string; warm?: string }>();

beforeAll(async () => {
  issuer = await createTestIssuer({ audience: AUDIENCE, now: clock.now });
  faulty = await serveFaultyJwks(issuer, { slowMs: 2 * JWKS_TIMEOUT * 1000, retryAfter: 30 });
  process.on('unhandledRejection', onUnhandled);
});

afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  await faulty.close();
  const rows = [...observed].map(([title, { cold, warm }]) => `| ${title} | ${cold ?? ''} | ${warm ?? ''} |`);
  console.log(['| fault | no keys cached | keys cached |', '|---|---|---|', ...rows].join('\n'));
});

beforeEach(async () => {
  clock.advance(3600);
  await faulty.setFault('none');
  faulty.reset();
});

afterEach(async () => {
  await faulty.idle();
  await new Promise((resolve) => setImmediate(resolve));
  expect(unhandled).toEqual([]);
});

const { verifier, log } = verifierFixture(() => ({
  registry: [faulty.entry],
  audience: AUDIENCE,
  now: clock.now,
  jwksTimeout: JWKS_TIMEOUT,
  jwksMaxBytes: 16 * 1024,
}));

/** `CONCURRENT` verifications of distinct valid tokens at once. */
async function burst(v: Verifier): Promise<PromiseSettledResult<AuthContext>[]> {
  const tokens = await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => issuer.token({ jti: `burst-${i}` })));
  return Promise.allSettled(tokens.map((token) => v.verify(token)));
}

/** The `AuthError`s of `outcomes`, every one of which must be a rejection with one. */
function rejections(outcomes: readonly PromiseSettledResult<unknown>[]): AuthError[] {
  return outcomes.map((outcome) => {
    expect(outcome.status).toBe('rejected');
    const reason: unknown = outcome.status === 'rejected' ? outcome.reason : undefined;
    expect(reason).toBeInstanceOf(AuthError);
    return reason as AuthError;
  });
}

function note(title: string, column: 'cold' | 'warm', text: string): void {
  observed.set(title, { ...observed.get(title), [column]: text });
}

describe.each(CASES)('JWKS fault: $title', (c) => {
  test('no keys cached: every verification is jwks_unavailable (503, Retry-After), after one download, then back-off', async () => {
    const v = verifier();
    await faulty.setFault(c.fault);
    const responses = rejections(await burst(v)).map((error) => toErrorResponse(error));
    expect(new Set(responses.map((response) => `${response.status} ${response.body.code} ${response.headers['retry-after']}`))).toEqual(
      new Set([`503 jwks_unavailable ${c.retryAfter}`]),
    );
    expect(log.fetches()).toMatchObject([{ outcome: 'error', reason: c.reason }]);
    expect(faulty.requests).toBe(c.requestsPerDownload);
    expect(faulty.maxActive).toBeLessThanOrEqual(1);
    // Inside the back-off: answered at once, no new download.
    expect((await authRejection(v.verify(await issuer.token()))).code).toBe('jwks_unavailable');
    expect(faulty.requests).toBe(c.requestsPerDownload);
    note(c.title, 'cold', `503 \`jwks_unavailable\`, Retry-After ${c.retryAfter}; 1 download (\`${c.reason}\`), then back-off`);
  });

  test('keys cached: the last good keys keep verifying through the stale window, then jwks_unavailable', async () => {
    const v = verifier();
    await v.verify(await issuer.token());
    await faulty.setFault(c.fault);
    faulty.reset();
    clock.advance(MAX_AGE);
    const reload = log.nextFetch();
    const outcomes = await burst(v);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(CONCURRENT);
    expect(await reload).toMatchObject({ trigger: 'max_age', outcome: 'error', reason: c.reason });
    await faulty.idle();
    expect(faulty.requests).toBe(c.requestsPerDownload);
    expect(faulty.maxActive).toBeLessThanOrEqual(1);
    // Still inside the back-off: verified from the held keys, no new download.
    await expect(v.verify(await issuer.token())).resolves.toBeDefined();
    expect(faulty.requests).toBe(c.requestsPerDownload);
    // The stale window closes: the held keys stop verifying.
    clock.advance(STALE_WINDOW);
    const error = await authRejection(v.verify(await issuer.token()));
    expect([error.code, error.status]).toEqual(['jwks_unavailable', 503]);
    note(c.title, 'warm', `verifies with the held keys (reload fails: \`${c.reason}\`) until max-age + stale window, then 503`);
  });
});

describe('JWKS fault: flapping server (every other answer is a 500)', () => {
  const title = 'flapping (500, 200, 500, …)';

  test('no keys cached: the first failure is jwks_unavailable; after the 1 s back-off the next good answer verifies', async () => {
    const v = verifier();
    await faulty.setFault('flapping');
    expect(new Set(rejections(await burst(v)).map((error) => error.code))).toEqual(new Set(['jwks_unavailable']));
    expect(faulty.requests).toBe(1);
    clock.advance(1);
    const second = await burst(v);
    expect(second.every((outcome) => outcome.status === 'fulfilled')).toBe(true);
    expect(faulty.requests).toBe(2);
    expect(faulty.maxActive).toBeLessThanOrEqual(1);
    expect(log.fetches().map((event) => event.outcome)).toEqual(['error', 'ok']);
    note(title, 'cold', '503 until the back-off ends, then the next good answer loads the keys and verifies');
  });

  test('keys cached: every verification succeeds; failed reloads are retried after the back-off and a good one renews the keys', async () => {
    const v = verifier();
    await v.verify(await issuer.token());
    await faulty.setFault('flapping');
    faulty.reset();
    clock.advance(MAX_AGE);
    const failed = log.nextFetch();
    expect((await burst(v)).every((outcome) => outcome.status === 'fulfilled')).toBe(true);
    expect((await failed).outcome).toBe('error');
    clock.advance(1);
    const renewed = log.nextFetch();
    expect((await burst(v)).every((outcome) => outcome.status === 'fulfilled')).toBe(true);
    expect((await renewed).outcome).toBe('ok');
    // Renewed keys are fresh for another max-age: no download, whatever the traffic.
    clock.advance(MAX_AGE - 1);
    expect((await burst(v)).every((outcome) => outcome.status === 'fulfilled')).toBe(true);
    expect(faulty.requests).toBe(2);
    expect(faulty.maxActive).toBeLessThanOrEqual(1);
    note(title, 'warm', 'always verifies: stale keys while a reload fails, renewed by the next good answer');
  });
});
