import { defineConfig } from 'vitest/config';
import { PATIENCE_MS } from './test/support/loaded-machine.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // Set for a loaded machine (test/support/loaded-machine.ts), where a test that takes 5 s idle may take 30;
    // PAYGATE_TEST_TIME_SCALE stretches them, with the tests' margins, for a busier machine still.
    testTimeout: 2 * PATIENCE_MS,
    // Vitest's default is one worker less than the cores: one file at a time on a 2-core machine,
    // while many files mostly wait on child processes (builds, tsc, servers). Two overlap them.
    maxWorkers: 2,
    minWorkers: 1,
    // One `npm pack` shared by the tests of the packed package (test/support/pack-once.ts), and
    // 2048-bit RSA keys made once (kept in .tmp/) and handed out by WebCrypto's `generateKey` in
    // every file (test/support/key-pool-once.ts, key-pool.ts): fresh keys cost more CPU than anything else.
    // One PostgreSQL server for the run, where each test file makes databases of its own from a template
    // database, and one initdb cluster that a test's own server copies (test/support/pg-server-once.ts).
    globalSetup: ['./test/support/pack-once.ts', './test/support/key-pool-once.ts', './test/support/pg-server-once.ts'],
    setupFiles: ['./test/support/key-pool.ts'],
    hookTimeout: 4 * PATIENCE_MS,
    // Compile-only type tests (`expectTypeOf`, `@ts-expect-error`) in `*.test-d.ts`, run by `vitest run`.
    // Type errors elsewhere are `npm run typecheck`'s to report, so tsc here reads only these files
    // and what they import (test/tsconfig.test-d.json), not the whole project.
    typecheck: {
      enabled: true,
      include: ['test/**/*.test-d.ts'],
      tsconfig: './test/tsconfig.test-d.json',
      ignoreSourceErrors: true,
    },
  },
});
