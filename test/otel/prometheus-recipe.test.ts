/**
 * The Prometheus recipe of docs/observability.md, examples/recipes/otel-prometheus.mjs, carried
 * verbatim by the page: the OpenTelemetry SDK's Prometheus exporter serves paygate-auth's metrics
 * in the text format Prometheus scrapes. Needs the build (the recipe imports `paygate-auth/otel`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Telemetry } from '../../src/otel/index.js';
import { type TestIssuer, createTestIssuer } from '../../src/testing/index.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const RECIPE = join(root, 'examples/recipes/otel-prometheus.mjs');
const built = existsSync(join(root, 'dist/otel/index.js'));

interface Recipe {
  prometheusTelemetry(options: Record<string, unknown>): {
    telemetry: Telemetry;
    exporter: { getMetricsRequestHandler(request: unknown, response: unknown): void };
    shutdown(): Promise<void>;
  };
}

describe.skipIf(!built)('the Prometheus recipe of docs/observability.md', () => {
  let issuer: TestIssuer;
  let server: Server;
  let scraped = '';

  beforeAll(async () => {
    issuer = await createTestIssuer({ audience: 'https://payments.test' });
    await issuer.listen();
    const { prometheusTelemetry } = (await import(RECIPE)) as Recipe;
    const { telemetry, exporter, shutdown } = prometheusTelemetry({ preventServerStart: true });
    const verifier = telemetry.createVerifier({ registry: [issuer.entry], audience: 'https://payments.test' });
    await verifier.verify(await issuer.token());
    await verifier.verify(await issuer.token({ aud: 'https://elsewhere.test' })).catch(() => undefined);
    server = createServer((request, response) => exporter.getMetricsRequestHandler(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    scraped = await (await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`)).text();
    await shutdown();
  });

  afterAll(async () => {
    server?.close();
    await issuer?.close();
  });

  it('is carried by the page verbatim', () => {
    const code = readFileSync(RECIPE, 'utf8').trim();
    expect(readFileSync(join(root, 'docs/observability.md'), 'utf8')).toContain(code);
  });

  it('serves the verifications by outcome, code and issuer in the Prometheus text format', () => {
    const issuerLabel = `paygate_auth_issuer="${issuer.issuer}"`;
    expect(scraped).toMatch(/^# TYPE paygate_auth_verification_duration histogram$/m);
    expect(scraped).toMatch(
      new RegExp(`^paygate_auth_verification_duration_count\\{paygate_auth_verification_outcome="ok",[^}]*${issuerLabel}[^}]*\\} 1$`, 'm'),
    );
    expect(scraped).toMatch(
      /^paygate_auth_verification_duration_count\{paygate_auth_verification_outcome="rejected",[^}]*error_type="audience_mismatch"[^}]*\} 1$/m,
    );
  });

  it('serves the JWKS downloads and the keys held', () => {
    expect(scraped).toMatch(/^paygate_auth_jwks_fetch_duration_count\{[^}]*paygate_auth_jwks_outcome="ok"[^}]*\} 1$/m);
    expect(scraped).toMatch(/^paygate_auth_jwks_key_count\{[^}]*\} 1$/m);
  });
});
