import { defineConfig } from 'tsup';

/**
 * One entry per public subpath (see package.json#exports). `splitting` keeps a single copy of the
 * core shared by every subpath, so `AuthError` is one class whichever subpath throws it.
 */
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'express/index': 'src/adapters/express/index.ts',
    'fastify/index': 'src/adapters/fastify/index.ts',
    'koa/index': 'src/adapters/koa/index.ts',
    'fetch/index': 'src/adapters/fetch/index.ts',
    'hono/index': 'src/adapters/hono/index.ts',
    'payment-links/index': 'src/payment-links/index.ts',
    'postgres/index': 'src/postgres/index.ts',
    'otel/index': 'src/otel/index.ts',
    'testing/index': 'src/testing/index.ts',
    'issuer/index': 'src/issuer/index.ts',
    'testing/msw': 'src/testing/msw.ts',
    cli: 'src/cli/main.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  splitting: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  // Keep `node:` on Node built-ins (`import('node:fs/promises')`): bare `fs/promises` reads as an
  // npm package to a bundler for Web runtimes, which then fails to resolve it even where the code
  // that loads it (FileKeyStore, the loopback server) is never reached; `node:*` is one pattern to
  // mark external.
  removeNodeProtocol: false,
});
