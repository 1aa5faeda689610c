/**
 * paygate-auth/otel: OpenTelemetry metrics and traces of verifiers and of the PostgreSQL
 * followers, through `@opentelemetry/api` (an optional peer dependency). With no SDK registered
 * and no provider given, nothing is instrumented.
 *
 * @module paygate-auth/otel
 */
export { ATTRIBUTE_NAMES, INSTRUMENTATION_SCOPE, METRIC_NAMES, SPAN_NAMES } from './names.js';
export type { TelemetryOptions } from './providers.js';
export { type Telemetry, createTelemetry } from './telemetry.js';
