import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { createTelemetry } from 'paygate-auth/otel';

/**
 * paygate-auth's metrics for Prometheus to scrape, at http://<host>:9464/metrics by default
 * (the exporter's options: `port`, `host`, `endpoint`, `preventServerStart`…).
 */
export function prometheusTelemetry(exporterOptions = {}) {
  const exporter = new PrometheusExporter(exporterOptions);
  const meterProvider = new MeterProvider({ readers: [exporter] });
  const telemetry = createTelemetry({ meterProvider });
  return { telemetry, exporter, shutdown: () => meterProvider.shutdown() };
}

// const { telemetry } = prometheusTelemetry();
// const verifier = telemetry.createVerifier({ registry, audience: 'https://payments.example' });
// const followers = await postgresFollowers(pool, telemetry.followersOptions());
// followers.attach(verifier);
