/**
 * paygate-auth/otel, read back through the OpenTelemetry SDK's in-memory exporters: each
 * verification (outcome, code, issuer, duration, a span), each JWKS download (duration, a span),
 * the keys held, keys removed and key rules broken, and the staleness of the PostgreSQL
 * followers; attributes never carry the token or a claim beyond `iss`; and with no SDK,
 * nothing is instrumented.
 */
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, metrics, trace } from '@opentelemetry/api';
import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricData,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_FULL,
} from '@opentelemetry/semantic-conventions';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AuthError, type VerifierEvent, authenticate } from '../../src/index.js';
import { ATTRIBUTE_NAMES as A, METRIC_NAMES, SPAN_NAMES, type Telemetry, createTelemetry } from '../../src/otel/index.js';
import { type TestIssuer, createTestIssuer } from '../../src/testing/index.js';
import { shielded } from '../../src/postgres/hook.js';
import {
  type PostgresFollowersOptions,
  type RegistryEvent,
  postgresControls,
  postgresKeyHistory,
  postgresRegistry,
} from '../../src/postgres/index.js';
import { watchUnhandledRejections } from '../support/unhandled-rejections.js';

const AUDIENCE = 'https://payments.test';

/** An SDK with in-memory exporters: the metrics as last collected, the spans as ended. */
function inMemorySdk() {
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] });
  return {
    meterProvider,
    tracerProvider,
    spans: (name?: string): ReadableSpan[] => spanExporter.getFinishedSpans().filter((span) => name === undefined || span.name === name),
    async metric(name: string): Promise<MetricData | undefined> {
      metricExporter.reset();
      await reader.forceFlush();
      const collected = metricExporter.getMetrics().at(-1);
      return collected?.scopeMetrics.flatMap((scope) => scope.metrics).find((metric) => metric.descriptor.name === name);
    },
    shutdown: () => Promise.all([meterProvider.shutdown(), tracerProvider.shutdown()]),
  };
}

type Sdk = ReturnType<typeof inMemorySdk>;
const points = (metric: MetricData | undefined) => (metric?.dataPoints ?? []) as DataPoint<unknown>[];
const countOf = (point: DataPoint<unknown> | undefined) => (point?.value as Histogram | undefined)?.count ?? 0;

let issuer: TestIssuer;
let sdk: Sdk;
let telemetry: Telemetry;

beforeAll(async () => {
  issuer = await createTestIssuer({ audience: AUDIENCE, lifetime: 600 });
  await issuer.listen();
});
afterAll(() => issuer.close());

function setUp(): void {
  sdk = inMemorySdk();
  telemetry = createTelemetry({ meterProvider: sdk.meterProvider, tracerProvider: sdk.tracerProvider });
}

afterEach(async () => {
  telemetry?.stop();
  await sdk?.shutdown();
});

const verifierFor = (options: Record<string, unknown> = {}) =>
  telemetry.createVerifier({ registry: [issuer.entry], audience: AUDIENCE, ...options });

describe('verifications', () => {
  it('are counted in the duration histogram by outcome, code and issuer, in seconds', async () => {
    setUp();
    const verifier = verifierFor();
    await verifier.verify(await issuer.token());
    await verifier.verify(await issuer.token({ aud: 'https://elsewhere.test' })).catch(() => undefined);
    await verifier.verify(await issuer.token({ aud: 'https://elsewhere.test' })).catch(() => undefined);
    const metric = await sdk.metric(METRIC_NAMES.verificationDuration);
    expect(metric?.descriptor.unit).toBe('s');
    const byOutcome = Object.fromEntries(
      points(metric).map((point) => [`${point.attributes[A.verificationOutcome]} ${point.attributes[A.errorType] ?? '-'}`, point]),
    );
    expect(countOf(byOutcome['ok -'])).toBe(1);
    expect(countOf(byOutcome['rejected audience_mismatch'])).toBe(2);
    expect(byOutcome['ok -']?.attributes).toEqual({
      [A.verificationOutcome]: 'ok',
      [A.verificationCached]: false,
      [A.issuer]: issuer.issuer,
    });
    const sum = (byOutcome['ok -']?.value as Histogram | undefined)?.sum ?? 0;
    expect(sum).toBeGreaterThan(0);
    expect(sum).toBeLessThan(10);
  });

  it('say when the result cache answered', async () => {
    setUp();
    const verifier = verifierFor({ cacheAdmission: 'first-use' });
    const token = await issuer.token();
    await verifier.verify(token);
    await verifier.verify(token);
    const cached = points(await sdk.metric(METRIC_NAMES.verificationDuration)).map((point) => point.attributes[A.verificationCached]);
    expect(cached.sort()).toEqual([false, true]);
  });

  it('name no issuer for a token whose issuer is not registered (forged issuers cannot multiply the series)', async () => {
    setUp();
    const verifier = verifierFor();
    for (const iss of ['https://a.intruder.test', 'https://b.intruder.test']) {
      await verifier.verify(await issuer.token({ iss })).catch(() => undefined);
    }
    const [point, ...others] = points(await sdk.metric(METRIC_NAMES.verificationDuration));
    expect(others).toEqual([]);
    expect(point?.attributes).toEqual({
      [A.verificationOutcome]: 'rejected',
      [A.verificationCached]: false,
      [A.errorType]: 'unknown_issuer',
    });
    expect(countOf(point)).toBe(2);
  });

  it("count a scope refusal (403) as a rejection of its own after the token's ok verification", async () => {
    setUp();
    const verifier = verifierFor();
    const token = await issuer.token({ scope: 'hub:subscribe' });
    const result = await authenticate(verifier, { authorization: `Bearer ${token}`, requiredScopes: 'pay:processPayments' });
    expect(result.ok).toBe(false);
    const byOutcome = Object.fromEntries(
      points(await sdk.metric(METRIC_NAMES.verificationDuration)).map((point) => [
        `${point.attributes[A.verificationOutcome]} ${point.attributes[A.errorType] ?? '-'}`,
        point,
      ]),
    );
    expect(Object.keys(byOutcome).sort()).toEqual(['ok -', 'rejected insufficient_scope']);
    expect(countOf(byOutcome['ok -'])).toBe(1);
    expect(countOf(byOutcome['rejected insufficient_scope'])).toBe(1);
    expect(byOutcome['rejected insufficient_scope']?.attributes[A.issuer]).toBe(issuer.issuer);
  });

  it('are spans with the issuer, the kid, the outcome and the code, ending when verify() does', async () => {
    setUp();
    const verifier = verifierFor();
    const before = Date.now();
    await verifier.verify(await issuer.token());
    await verifier.verify(await issuer.token({ aud: 'https://elsewhere.test' })).catch(() => undefined);
    const [ok, rejected] = sdk.spans(SPAN_NAMES.verify);
    expect(ok?.kind).toBe(SpanKind.INTERNAL);
    expect(ok?.attributes).toEqual({
      [A.verificationOutcome]: 'ok',
      [A.verificationCached]: false,
      [A.issuer]: issuer.issuer,
      [A.keyId]: 'test-key',
    });
    expect(ok?.status.code).toBe(SpanStatusCode.UNSET);
    expect(rejected?.attributes).toMatchObject({
      [A.verificationOutcome]: 'rejected',
      [A.errorType]: 'audience_mismatch',
      [A.keyId]: 'test-key',
    });
    expect(rejected?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'audience_mismatch' });
    const [seconds = 0, nanos = 0] = ok?.startTime ?? [];
    expect(seconds * 1000 + nanos / 1e6).toBeGreaterThanOrEqual(before - 1);
  });

  it('never put the token, its claims or a forged kid in a span (secrets and personal data in traces)', async () => {
    setUp();
    const verifier = verifierFor();
    const tokens = [
      await issuer.token({ tenant_name: 'Confidential Clinic', user_ern: '//users/u-secret' }),
      await issuer.token({ aud: 'https://elsewhere.test' }),
      await issuer.token({}, { kid: 'forged-kid' }),
      await issuer.token({ iss: 'https://intruder.test' }),
    ];
    for (const token of tokens) await verifier.verify(token).catch(() => undefined);
    const text = JSON.stringify(sdk.spans().map((span) => [span.name, span.attributes, span.status, span.events]));
    for (const token of tokens) for (const part of token.split('.')) expect(text).not.toContain(part);
    for (const value of [
      'Confidential Clinic',
      'u-secret',
      issuer.tenant,
      'pay:processPayments',
      'https://elsewhere.test',
      'forged-kid',
      'intruder',
    ]) {
      expect(text).not.toContain(value);
    }
  });

  it('nest under the span active when verify() was called', async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    try {
      setUp();
      const verifier = verifierFor();
      const token = await issuer.token();
      const request = sdk.tracerProvider.getTracer('test').startSpan('request');
      await context.with(trace.setSpan(ROOT_CONTEXT, request), () => verifier.verify(token));
      request.end();
      const [verify] = sdk.spans(SPAN_NAMES.verify);
      expect(verify?.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
      expect(verify?.spanContext().traceId).toBe(request.spanContext().traceId);
    } finally {
      context.disable();
    }
  });

  it('still reach the listener given in the options, after the telemetry', async () => {
    setUp();
    const events: VerifierEvent[] = [];
    const verifier = verifierFor({ onEvent: (event: VerifierEvent) => events.push(event) });
    await verifier.verify(await issuer.token());
    expect(events.map((event) => event.type)).toContain('verify_success');
    expect(sdk.spans(SPAN_NAMES.verify)).toHaveLength(1);
  });

  it('refuse an onEvent that is not a function, naming it, as createVerifier does', () => {
    setUp();
    expect(() => verifierFor({ onEvent: 'console' })).toThrow(TypeError);
    expect(() => verifierFor({ onEvent: 'console' })).toThrow(/onEvent/);
  });
});

describe('JWKS downloads', () => {
  it('are timed by issuer, trigger and outcome, and are CLIENT spans with the HTTP attributes', async () => {
    setUp();
    const verifier = verifierFor();
    await verifier.verify(await issuer.token());
    const [point] = points(await sdk.metric(METRIC_NAMES.jwksFetchDuration));
    expect(point?.attributes).toEqual({ [A.issuer]: issuer.issuer, [A.jwksTrigger]: 'initial', [A.jwksOutcome]: 'ok' });
    expect(countOf(point)).toBe(1);
    const [span] = sdk.spans(SPAN_NAMES.jwksFetch);
    const url = new URL(issuer.entry.jwksUri);
    expect(span?.kind).toBe(SpanKind.CLIENT);
    expect(span?.attributes).toMatchObject({
      [A.jwksKeys]: 1,
      [A.httpRequestMethod]: 'GET',
      [A.urlFull]: `${url.origin}${url.pathname}`,
      [A.serverAddress]: '127.0.0.1',
      [A.serverPort]: Number(url.port),
    });
  });

  it('that fail carry the reason as error.type and the HTTP status', async () => {
    setUp();
    const verifier = telemetry.createVerifier({
      registry: [{ ...issuer.entry, jwksUri: `${issuer.entry.jwksUri}/missing` }],
      audience: AUDIENCE,
    });
    await verifier.verify(await issuer.token()).catch(() => undefined);
    const [point] = points(await sdk.metric(METRIC_NAMES.jwksFetchDuration));
    expect(point?.attributes).toMatchObject({ [A.jwksOutcome]: 'error', [A.errorType]: 'status', [A.httpResponseStatusCode]: 404 });
    const [span] = sdk.spans(SPAN_NAMES.jwksFetch);
    expect(span?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'status' });
  });
});

describe('your onEvent beside the telemetry', () => {
  it('is still called, and an async one whose promise rejects leaves no unhandled rejection', async () => {
    setUp();
    const unhandled = watchUnhandledRejections();
    try {
      const seen: string[] = [];
      const verifier = verifierFor({
        onEvent: async (event: VerifierEvent) => {
          seen.push(event.type);
          throw new Error('the exporter is down');
        },
      });
      await expect(verifier.verify(await issuer.token())).resolves.toMatchObject({ issuer: issuer.issuer });
      await unhandled.settled();
      expect(seen).toContain('verify_success');
      expect(unhandled.reasons).toEqual([]);
    } finally {
      unhandled.stop();
    }
  });
});

describe('keys', () => {
  it('held are observed per registered issuer at each collection: 0 before a download, then those that verify', async () => {
    setUp();
    const verifier = verifierFor();
    const held = async () => points(await sdk.metric(METRIC_NAMES.keyCount)).map((point) => [point.attributes[A.issuer], point.value]);
    expect(await held()).toEqual([[issuer.issuer, 0]]);
    await verifier.warmUp();
    expect(await held()).toEqual([[issuer.issuer, 1]]);
    verifier.revokeKey(issuer.issuer, 'test-key');
    expect(await held()).toEqual([[issuer.issuer, 0]]);
  });

  it('held by two verifiers of one issuer are counted once: the distinct keys that verify, not their sum', async () => {
    setUp();
    const [first, second] = [verifierFor(), verifierFor()];
    const held = async () => points(await sdk.metric(METRIC_NAMES.keyCount)).map((point) => [point.attributes[A.issuer], point.value]);
    await Promise.all([first.warmUp(), second.warmUp()]);
    expect(await held()).toEqual([[issuer.issuer, 1]]);
    // Revoked in one verifier only: the key still verifies in the other.
    first.revokeKey(issuer.issuer, 'test-key');
    expect(await held()).toEqual([[issuer.issuer, 1]]);
    second.revokeKey(issuer.issuer, 'test-key');
    expect(await held()).toEqual([[issuer.issuer, 0]]);
  });

  it('removed are counted by cause, and broken key rules by rule', async () => {
    setUp();
    const rotating = await createTestIssuer({ audience: AUDIENCE, issuer: 'https://rotating.test' });
    await rotating.listen();
    try {
      const verifier = telemetry.createVerifier({ registry: [rotating.entry], audience: AUDIENCE, jwksCooldown: 0 });
      await verifier.verify(await rotating.token());
      await rotating.rotate({ retire: true });
      // The new key verifies at once, minutes (not an hour) after it appeared: key_used_early; the
      // old one is gone while its token is still valid: key_withdrawn.
      await verifier.verify(await rotating.token());
      const removals = points(await sdk.metric(METRIC_NAMES.keyRemovals)).map((point) => [point.attributes, point.value]);
      expect(removals).toEqual([[{ [A.issuer]: rotating.issuer, [A.removalCause]: 'jwks' }, 1]]);
      const breaches = points(await sdk.metric(METRIC_NAMES.keyBreaches)).map((point) => point.attributes[A.keyBreach]);
      expect(breaches.sort()).toEqual(['key_used_early', 'key_withdrawn']);
    } finally {
      await rotating.close();
    }
  });
});

describe('PostgreSQL followers', () => {
  const staleness = async () =>
    Object.fromEntries(
      points(await sdk.metric(METRIC_NAMES.staleness)).map((point) => [point.attributes[A.follower], point.value as number]),
    );

  it('report 0 while following, and the seconds since the registry read last known good during a stall', async () => {
    setUp();
    const seen: string[] = [];
    const options = telemetry.registryOptions({ pollInterval: 1000, onEvent: (event) => seen.push(event.type) });
    expect(options.pollInterval).toBe(1000);
    options.onEvent?.({
      type: 'registry_loaded',
      issuers: 1,
      change: { added: [], updated: [], removed: [] },
      through: 1,
      digest: 'd',
      refused: 0,
    });
    expect(await staleness()).toEqual({ registry: 0 });
    options.onEvent?.({ type: 'registry_stale', error: 'connection terminated', since: Date.now() - 30_000, issuers: 1 });
    expect((await staleness()).registry).toBeGreaterThanOrEqual(30);
    options.onEvent?.({ type: 'registry_recovered', staleForMs: 30_000 });
    expect(await staleness()).toEqual({ registry: 0 });
    expect(seen).toEqual(['registry_loaded', 'registry_stale', 'registry_recovered']);
  });

  it('count a stall of the controls from its first failure, and not a verifier refusing an action', async () => {
    setUp();
    const errors: unknown[] = [];
    const options = telemetry.controlsOptions({ onError: (error) => errors.push(error), onRecovered: () => errors.push('recovered') });
    const refused = new AuthError('jwks_unavailable', 'keys cannot be loaded');
    options.onError?.(refused);
    expect(await staleness()).toEqual({ controls: 0 });
    vi.useFakeTimers({ now: Date.now(), toFake: ['Date'] });
    try {
      options.onError?.(new Error('Connection terminated unexpectedly'));
      vi.setSystemTime(Date.now() + 12_000);
      expect((await staleness()).controls).toBe(12);
      options.onRecovered?.();
      expect((await staleness()).controls).toBe(0);
    } finally {
      vi.useRealTimers();
    }
    expect(errors).toEqual([refused, new Error('Connection terminated unexpectedly'), 'recovered']);
  });

  it("keep an async hook's rejection ignored when wrapping it, as the follower does: no unhandled rejection", async () => {
    setUp();
    const unhandled = watchUnhandledRejections();
    try {
      const calls: string[] = [];
      const failing = (name: string) => async () => {
        calls.push(name);
        throw new Error(`${name}: the exporter is down`);
      };
      const controls = telemetry.controlsOptions({ onError: failing('onError'), onRecovered: failing('onRecovered') });
      const registry = telemetry.registryOptions({ onEvent: failing('onEvent') });
      // As a follower calls its hooks.
      shielded(controls.onError as (error: unknown) => void)(new Error('Connection terminated unexpectedly'));
      shielded(controls.onRecovered as () => void)();
      shielded(registry.onEvent as (event: RegistryEvent) => void)({ type: 'registry_recovered', staleForMs: 1000 });
      await unhandled.settled();
      expect(calls).toEqual(['onError', 'onRecovered', 'onEvent']);
      expect(unhandled.reasons).toEqual([]);
    } finally {
      unhandled.stop();
    }
  });

  it('log a stall and its end in one line each where no callback is given', async () => {
    setUp();
    const lines = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const options = telemetry.keyHistoryOptions();
      options.onError?.(new Error('timeout exceeded when trying to connect'));
      options.onRecovered?.();
      expect(lines.mock.calls.map(([line]) => line)).toEqual([
        'paygate-auth/otel: PostgreSQL key history failed: timeout exceeded when trying to connect (retrying)',
        'paygate-auth/otel: PostgreSQL key history answers again',
      ]);
      expect(Object.keys(await staleness())).toEqual(['key_history']);
    } finally {
      lines.mockRestore();
    }
  });

  it('hand on a callback that is no function, for the follower to refuse it, naming it', async () => {
    setUp();
    const db = { query: () => Promise.reject(new Error('no statement expected')) };
    await expect(postgresRegistry(db, telemetry.registryOptions({ onEvent: 'console' as never }))).rejects.toThrow(
      /postgresRegistry: onEvent/,
    );
    await expect(postgresControls(db, telemetry.controlsOptions({ onError: 'console' as never }))).rejects.toThrow(
      /postgresControls: onError/,
    );
    await expect(postgresKeyHistory(db, telemetry.keyHistoryOptions({ onRecovered: 'console' as never }))).rejects.toThrow(
      /postgresKeyHistory: onRecovered/,
    );
  });

  it('log a registry row left out where no onEvent is given, as the registry does, its key escaped', () => {
    setUp();
    const lines = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const options = telemetry.registryOptions();
      options.onEvent?.({
        type: 'registry_row_refused',
        row: 'https://evil.test\n\u202e',
        rule: 'invalid_entry',
        reason: 'jwksUri is not https',
      });
      expect(lines.mock.calls.map(([line]) => String(line))).toEqual([
        expect.stringContaining('row "https://evil.test\\u000a\\u202e" is left out (invalid_entry): jwksUri is not https'),
      ]);
    } finally {
      lines.mockRestore();
    }
  });
});

describe('PostgreSQL followers started together', () => {
  it('report the staleness of each follower postgresFollowers starts, keeping your callbacks', async () => {
    setUp();
    const stalls: unknown[] = [];
    const options = telemetry.followersOptions({
      statementTimeout: 2000,
      controls: { pollInterval: 1000, onError: (error) => stalls.push(error) },
      keyHistory: false,
    });
    expect(options.statementTimeout).toBe(2000);
    expect(options.keyHistory).toBe(false);
    expect(options.controls.pollInterval).toBe(1000);
    // Started by default, so reported too: the options made for it come back beside yours.
    const registry = (options as PostgresFollowersOptions).registry;
    if (registry === undefined || registry === false) throw new Error('the registry options are made');
    const lines = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      registry.onEvent?.({ type: 'registry_stale', error: 'connection terminated', since: Date.now() - 30_000, issuers: 1 });
      options.controls.onError?.(new Error('Connection terminated unexpectedly'));
      // The registry had no onEvent of yours, so its stall is logged; the controls' went to yours.
      expect(lines.mock.calls.map(([line]) => String(line))).toEqual([
        expect.stringMatching(/^paygate-auth\/otel: PostgreSQL registry cannot be read \(connection terminated\)/),
      ]);
    } finally {
      lines.mockRestore();
    }
    const byFollower = Object.fromEntries(
      points(await sdk.metric(METRIC_NAMES.staleness)).map((point) => [point.attributes[A.follower], point.value as number]),
    );
    expect(Object.keys(byFollower).sort()).toEqual(['controls', 'registry']);
    expect(byFollower.registry).toBeGreaterThanOrEqual(30);
    expect(stalls).toEqual([new Error('Connection terminated unexpectedly')]);
  });
});

describe('names', () => {
  it('use the semantic conventions where they have one', () => {
    expect([A.errorType, A.httpRequestMethod, A.httpResponseStatusCode, A.urlFull, A.serverAddress, A.serverPort]).toEqual([
      ATTR_ERROR_TYPE,
      ATTR_HTTP_REQUEST_METHOD,
      ATTR_HTTP_RESPONSE_STATUS_CODE,
      ATTR_URL_FULL,
      ATTR_SERVER_ADDRESS,
      ATTR_SERVER_PORT,
    ]);
  });

  it('are each documented in docs/observability.md', async () => {
    const { readFile } = await import('node:fs/promises');
    const page = await readFile(new URL('../../docs/observability.md', import.meta.url), 'utf8');
    for (const name of [...Object.values(METRIC_NAMES), ...Object.values(SPAN_NAMES), ...Object.values(A)])
      expect(page).toContain(`\`${name}\``);
  });
});

describe('without an OpenTelemetry SDK', () => {
  it('instruments nothing: the options come back as given', () => {
    const idle = createTelemetry();
    expect(idle.enabled).toBe(false);
    const follow = { pollInterval: 1000 };
    const flush = { flushInterval: 1000 };
    expect(idle.registryOptions(follow)).toBe(follow);
    expect(idle.controlsOptions(follow)).toBe(follow);
    expect(idle.keyHistoryOptions(flush)).toBe(flush);
    const all = { controls: follow, keyHistory: flush };
    expect(idle.followersOptions(all)).toBe(all);
  });

  it('builds a verifier that verifies as createVerifier() builds it', async () => {
    const verifier = createTelemetry().createVerifier({ registry: [issuer.entry], audience: AUDIENCE });
    await expect(verifier.verify(await issuer.token())).resolves.toMatchObject({ issuer: issuer.issuer });
  });

  it('reports to the global providers once an SDK registered them, before the telemetry was created', async () => {
    sdk = inMemorySdk();
    metrics.setGlobalMeterProvider(sdk.meterProvider);
    trace.setGlobalTracerProvider(sdk.tracerProvider);
    try {
      const global = createTelemetry();
      expect(global.enabled).toBe(true);
      await global.createVerifier({ registry: [issuer.entry], audience: AUDIENCE }).verify(await issuer.token());
      expect(sdk.spans(SPAN_NAMES.verify)).toHaveLength(1);
      expect(points(await sdk.metric(METRIC_NAMES.verificationDuration))).toHaveLength(1);
      global.stop();
    } finally {
      metrics.disable();
      trace.disable();
    }
  });

  it('refuses a provider that is none, naming the option', () => {
    expect(() => createTelemetry({ meterProvider: {} as never })).toThrow(/meterProvider/);
    expect(() => createTelemetry({ tracerProvider: 'x' as never })).toThrow(/tracerProvider/);
  });
});
