/**
 * Where the instruments and spans go: the providers given, or the global ones, and whether an
 * OpenTelemetry SDK is behind them. With none, nothing is instrumented and nothing costs.
 */
import { methodsOption } from '../internal/index.js';
import {
  type Meter,
  type MeterProvider,
  ProxyTracerProvider,
  type Tracer,
  type TracerProvider,
  createNoopMeter,
  metrics,
  trace,
} from '@opentelemetry/api';
import { INSTRUMENTATION_SCOPE } from './names.js';

/** Where paygate-auth/otel reports. */
export interface TelemetryOptions {
  /**
   * Where the metrics go.
   * @default the global meter provider (`metrics.getMeterProvider()`) when an SDK registered one
   * before this call; otherwise no metrics
   */
  readonly meterProvider?: MeterProvider | undefined;
  /**
   * Where the spans go.
   * @default the global tracer provider (`trace.getTracerProvider()`) when an SDK registered one
   * before this call; otherwise no spans
   */
  readonly tracerProvider?: TracerProvider | undefined;
}

/** The meter and tracer to report to; `null` for each that has no SDK behind it. */
export interface Reporters {
  readonly meter: Meter | null;
  readonly tracer: Tracer | null;
}

function checkProvider(name: string, value: unknown, method: string): void {
  if (value !== undefined)
    methodsOption('createTelemetry', name, value, [method], `an OpenTelemetry ${name.replace(/^./, (c) => c.toUpperCase())}`);
}

/**
 * The meter and the tracer, each `null` when only the API's no-op is there: a global provider
 * with no SDK registered. Providers given are always used.
 * @throws {TypeError} naming the option at fault.
 */
export function reporters(options: TelemetryOptions): Reporters {
  if (typeof options !== 'object' || options === null) throw new TypeError('createTelemetry: options must be an object');
  checkProvider('meterProvider', options.meterProvider, 'getMeter');
  checkProvider('tracerProvider', options.tracerProvider, 'getTracer');
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(INSTRUMENTATION_SCOPE);
  const tracerProvider = options.tracerProvider ?? trace.getTracerProvider();
  // The global tracer provider is a proxy: it has a delegate once an SDK registered one.
  const noTracing =
    options.tracerProvider === undefined &&
    tracerProvider instanceof ProxyTracerProvider &&
    tracerProvider.getDelegateTracer(INSTRUMENTATION_SCOPE) === undefined;
  return {
    meter: options.meterProvider === undefined && meter === createNoopMeter() ? null : meter,
    tracer: noTracing ? null : tracerProvider.getTracer(INSTRUMENTATION_SCOPE),
  };
}
