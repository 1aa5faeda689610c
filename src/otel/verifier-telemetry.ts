/**
 * A verifier's events as OpenTelemetry metrics and spans: each verification (its outcome, code,
 * issuer and duration, and a span), each JWKS download (a duration and a span), keys removed and
 * key rules broken; and the keys each issuer holds, read from the verifier when metrics are
 * collected. Built on the verifier's own `onEvent` events and `exportKeys()`: nothing here decides
 * anything about a token. Attributes never hold the token, a claim beyond `iss` (as the registered
 * issuer) or anything a rejected token chose.
 */
import {
  type Attributes,
  type Counter,
  type Histogram,
  type Meter,
  type ObservableResult,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  context,
} from '@opentelemetry/api';
import type { JwksFetchEvent, Verifier, VerifierEvent, VerifierEventListener, VerifyFailureEvent, VerifySuccessEvent } from '../index.js';
import { capHint } from '../internal/index.js';
import { ATTRIBUTE_NAMES as A, METRIC_NAMES, SPAN_NAMES } from './names.js';

/** Bucket bounds of the duration histograms, in seconds: a cached verification takes microseconds, a download seconds. */
const DURATION_BUCKETS = [
  0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** Milliseconds since the epoch, to the microsecond, for spans drawn after the fact. */
function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

interface Instruments {
  readonly verifications: Histogram;
  readonly downloads: Histogram;
  readonly removals: Counter;
  readonly breaches: Counter;
}

function instruments(meter: Meter): Instruments {
  return {
    verifications: meter.createHistogram(METRIC_NAMES.verificationDuration, {
      unit: 's',
      description: 'Duration of token verifications, by outcome, code (error.type) and issuer; the count is the verifications.',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
    downloads: meter.createHistogram(METRIC_NAMES.jwksFetchDuration, {
      unit: 's',
      description: 'Duration of JWKS downloads (redirects and body included), by issuer, trigger and outcome.',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
    removals: meter.createCounter(METRIC_NAMES.keyRemovals, {
      unit: '{key}',
      description: 'Keys that stopped verifying, by issuer and cause.',
    }),
    breaches: meter.createCounter(METRIC_NAMES.keyBreaches, {
      unit: '{breach}',
      description: 'Key rules broken by an issuer, once per issuer, key and rule.',
    }),
  };
}

function verificationAttributes(event: VerifySuccessEvent | VerifyFailureEvent): Attributes {
  const attributes: Attributes = {
    [A.verificationOutcome]: event.type === 'verify_success' ? 'ok' : 'rejected',
    [A.verificationCached]: event.cached,
  };
  if (event.issuer !== null) attributes[A.issuer] = event.issuer;
  if (event.type === 'verify_failure') attributes[A.errorType] = event.code;
  return attributes;
}

function downloadAttributes(event: JwksFetchEvent): Attributes {
  const attributes: Attributes = { [A.issuer]: event.issuer, [A.jwksTrigger]: event.trigger, [A.jwksOutcome]: event.outcome };
  if (event.reason !== undefined) attributes[A.errorType] = event.reason;
  if (event.status !== undefined) attributes[A.httpResponseStatusCode] = event.status;
  return attributes;
}

/** The semantic conventions' HTTP attributes of a download from `jwksUri` (its credentials, query and fragment left out). */
function urlAttributes(jwksUri: string | undefined): Attributes {
  if (jwksUri === undefined) return {};
  const url = new URL(jwksUri);
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return {
    [A.httpRequestMethod]: 'GET',
    [A.urlFull]: `${url.origin}${url.pathname}`,
    [A.serverAddress]: url.hostname,
    [A.serverPort]: port,
  };
}

/** A span for something that has just ended and took `durationMs`, in the context it ended in. */
function pastSpan(tracer: Tracer, name: string, kind: SpanKind, durationMs: number, attributes: Attributes, error?: string): void {
  const end = epochMs();
  const span = tracer.startSpan(name, { kind, startTime: end - durationMs, attributes }, context.active());
  if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
  span.end(end);
}

/** Reports the events of the verifiers it listens to, and observes the keys they hold. */
export class VerifierTelemetry {
  readonly #instruments: Instruments | null;
  readonly #tracer: Tracer | null;
  readonly #verifiers = new Set<Verifier>();
  readonly #observeKeys: ((result: ObservableResult) => void) | null;
  readonly #keyCount: ReturnType<Meter['createObservableUpDownCounter']> | null;

  constructor(meter: Meter | null, tracer: Tracer | null) {
    this.#instruments = meter === null ? null : instruments(meter);
    this.#tracer = tracer;
    this.#keyCount =
      meter?.createObservableUpDownCounter(METRIC_NAMES.keyCount, {
        unit: '{key}',
        description:
          'Keys each issuer has that verify now (published, not revoked, not past the stale window) in any verifier of this telemetry, each counted once.',
      }) ?? null;
    this.#observeKeys = meter === null ? null : (result) => this.#observe(result);
  }

  /**
   * The listener for a verifier's `onEvent`. `verifier` gives the registry (for the JWKS
   * address of a download span) once the verifier exists.
   */
  listener(verifier: () => Verifier | undefined): VerifierEventListener {
    return (event: VerifierEvent) => {
      switch (event.type) {
        case 'verify_success':
        case 'verify_failure':
          this.#verification(event);
          break;
        case 'jwks_fetch':
          this.#download(event, verifier()?.registry.get(event.issuer)?.jwksUri);
          break;
        case 'keys_removed':
          this.#instruments?.removals.add(event.kids.length, { [A.issuer]: event.issuer, [A.removalCause]: event.cause });
          break;
        case 'key_used_early':
        case 'key_rotation_overdue':
        case 'key_withdrawn':
          this.#instruments?.breaches.add(1, { [A.issuer]: event.issuer, [A.keyBreach]: event.type });
          break;
        default:
          break;
      }
    };
  }

  /** Observes the keys `verifier` holds, at each collection, until {@link stop}. */
  watch(verifier: Verifier): void {
    if (this.#keyCount === null || this.#observeKeys === null) return;
    if (this.#verifiers.size === 0) this.#keyCount.addCallback(this.#observeKeys);
    this.#verifiers.add(verifier);
  }

  /** Stops observing the verifiers' keys. */
  stop(): void {
    if (this.#keyCount !== null && this.#observeKeys !== null) this.#keyCount.removeCallback(this.#observeKeys);
    this.#verifiers.clear();
  }

  #verification(event: VerifySuccessEvent | VerifyFailureEvent): void {
    const attributes = verificationAttributes(event);
    this.#instruments?.verifications.record(event.durationMs / 1000, attributes);
    if (this.#tracer === null) return;
    // A copy: the metric keeps the attributes it was given.
    const spanAttributes = event.kid === null ? { ...attributes } : { ...attributes, [A.keyId]: capHint(event.kid) };
    pastSpan(
      this.#tracer,
      SPAN_NAMES.verify,
      SpanKind.INTERNAL,
      event.durationMs,
      spanAttributes,
      event.type === 'verify_failure' ? event.code : undefined,
    );
  }

  #download(event: JwksFetchEvent, jwksUri: string | undefined): void {
    const attributes = downloadAttributes(event);
    this.#instruments?.downloads.record(event.durationMs / 1000, attributes);
    if (this.#tracer === null) return;
    const spanAttributes = { ...attributes, ...urlAttributes(jwksUri), ...(event.keys === undefined ? {} : { [A.jwksKeys]: event.keys }) };
    pastSpan(this.#tracer, SPAN_NAMES.jwksFetch, SpanKind.CLIENT, event.durationMs, spanAttributes, event.reason);
  }

  /**
   * One observation per registered issuer of every verifier watched: its distinct keys (by `kid`)
   * that verify now in any of them. Two verifiers trusting one issuer hold the same keys: a sum
   * would count each twice.
   */
  #observe(result: ObservableResult): void {
    const held = new Map<string, Set<string>>();
    const kidsOf = (issuer: string): Set<string> => {
      const kids = held.get(issuer) ?? new Set<string>();
      held.set(issuer, kids);
      return kids;
    };
    for (const verifier of this.#verifiers) {
      for (const issuer of verifier.registry.issuers) kidsOf(issuer);
      for (const entry of verifier.exportKeys().issuers) {
        const kids = kidsOf(entry.issuer);
        for (const key of entry.keys) kids.add(key.kid);
      }
    }
    for (const [issuer, kids] of held) result.observe(kids.size, { [A.issuer]: issuer });
  }
}
