/**
 * What the packed package must offer: every subpath with the exports it documents, and the
 * framework packages each subpath may load.
 */

/** The export names each subpath must have (at least). */
export const EXPECTED_EXPORTS: Readonly<Record<string, readonly string[]>> = {
  'paygate-auth': [
    'createVerifier',
    'IssuerRegistry',
    'parseErn',
    'parseTenantErn',
    'parseReference',
    'formatTenantErn',
    'parseScopes',
    'hasScopes',
    'SCOPES',
    'AuthError',
    'authenticate',
    'toErrorResponse',
  ],
  'paygate-auth/express': ['auth', 'requireScopes'],
  'paygate-auth/fastify': ['paygateAuth', 'requireScopes', 'default'],
  'paygate-auth/koa': ['auth', 'requireScopes'],
  'paygate-auth/fetch': ['withAuth', 'requireScopes'],
  'paygate-auth/hono': ['auth', 'requireScopes'],
  'paygate-auth/payment-links': ['createPaymentLinkHandler', 'createInfoHandler', 'InMemoryPaymentLinkStore', 'InMemoryDirectory'],
  'paygate-auth/postgres': ['PostgresPaymentLinkStore', 'PostgresIdempotencyStore', 'migrate', 'postgresControls'],
  'paygate-auth/otel': ['createTelemetry', 'METRIC_NAMES', 'SPAN_NAMES', 'ATTRIBUTE_NAMES'],
  'paygate-auth/testing': ['createTestIssuer', 'createTestVerifier', 'serveJwks', 'generateTestKey', 'signRawToken'],
  'paygate-auth/testing/msw': ['jwksHandlers', 'errorExceptLoopback'],
};

/** The framework packages (and msw) whose loading is watched. */
export const FRAMEWORKS = [
  'express',
  'fastify',
  'fastify-plugin',
  'koa',
  'hono',
  '@hono/node-server',
  '@koa/router',
  'msw',
  'pg',
  '@opentelemetry/api',
] as const;

/** The frameworks each subpath may load when imported: its own, and nothing else. */
export const ALLOWED_FRAMEWORKS: Readonly<Record<string, readonly string[]>> = {
  'paygate-auth': [],
  'paygate-auth/express': ['express'],
  'paygate-auth/fastify': ['fastify', 'fastify-plugin'],
  'paygate-auth/koa': ['koa'],
  'paygate-auth/fetch': [],
  'paygate-auth/hono': ['hono'],
  'paygate-auth/payment-links': [],
  'paygate-auth/postgres': [],
  'paygate-auth/otel': ['@opentelemetry/api'],
  'paygate-auth/testing': ['msw'],
  'paygate-auth/testing/msw': ['msw'],
};

/** The runtime dependencies a subpath may import (beside its framework). */
export const RUNTIME_PACKAGES: readonly string[] = ['lru-cache', 'jose'];

/** The packages linked next to the unpacked tarball: its runtime dependency and the optional peers. */
export const LINKED_PACKAGES = [
  'lru-cache',
  'jose',
  'express',
  'fastify',
  'fastify-plugin',
  'koa',
  'msw',
  'hono',
  'pg',
  '@opentelemetry/api',
] as const;
