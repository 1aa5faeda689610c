/**
 * `npm run test:unit`: the quick loop. Every test that needs no build, no packed tarball, no child
 * process of the examples and no PostgreSQL server of a test's own (the command line's database
 * tests use the run's shared server); `npm test` runs these and all the others.
 */
import { defineConfig } from 'vitest/config';
import base, { testProjects } from './vitest.config.js';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    // The command line's database tests (test/cli/) run here too, on the run's shared server.
    globalSetup: ['./test/support/key-pool-once.ts', './test/support/pg-server-once.ts'],
    // Of the files that run in a process of their own, only the one that replaces a module of Node's;
    // of the others, none that uses the packed tarball or PostgreSQL beyond the command line's.
    projects: testProjects(
      ['test/issuer/durable-file.test.ts'],
      ['test/package/**/*.test.ts', 'test/postgres/**/*.test.ts', 'test/bench/**/*.test.ts'],
    ),
  },
});
