/**
 * Every subpath of package.json#exports, with the source file that tsup builds it from: the one
 * list the tests that read the public surface from the sources share (the exported names, the
 * TSDoc of the options types), so that a subpath added is read by each of them.
 */
export const SUBPATHS: Readonly<Record<string, string>> = {
  'paygate-auth': 'src/index.ts',
  'paygate-auth/express': 'src/adapters/express/index.ts',
  'paygate-auth/fastify': 'src/adapters/fastify/index.ts',
  'paygate-auth/koa': 'src/adapters/koa/index.ts',
  'paygate-auth/fetch': 'src/adapters/fetch/index.ts',
  'paygate-auth/hono': 'src/adapters/hono/index.ts',
  'paygate-auth/payment-links': 'src/payment-links/index.ts',
  'paygate-auth/postgres': 'src/postgres/index.ts',
  'paygate-auth/otel': 'src/otel/index.ts',
  'paygate-auth/testing': 'src/testing/index.ts',
  'paygate-auth/testing/msw': 'src/testing/msw.ts',
  'paygate-auth/issuer': 'src/issuer/index.ts',
};
