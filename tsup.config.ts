import { defineConfig } from 'tsup';

/**
 * One entry per public subpath (see package.json#exports). `splitting` keeps a single copy of the
 * core shared by every subpath, so `AuthError` is one class whichever subpath throws it.
 */
const entry: Record<string, string> = {
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
};

/**
 * Where `tsc -p tsconfig.build.json` (the first half of `npm run build`) wrote the declarations of
 * a source file. The bundled declarations are made from these rather than from src/: from source,
 * tsup's declaration step type-checks and emits every file again per module it bundles, which
 * took 23 of the build's 25 s; tsc emits them all in one pass (about 4 s: `--noCheck`, as the type
 * check of src/ is `npm test`'s and `npm run typecheck`'s, and `npm publish`'s through
 * `prepublishOnly`), and bundling finished declarations takes a second or two.
 */
function declarationOf(file: string): string {
  return file.replace(/^src\//, '.tmp/declarations/').replace(/\.ts$/, '.d.ts');
}

export default defineConfig({
  entry,
  format: ['esm', 'cjs'],
  dts: { entry: Object.fromEntries(Object.entries(entry).map(([name, file]) => [name, declarationOf(file)])) },
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
