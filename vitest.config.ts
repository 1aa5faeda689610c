import { relative } from 'node:path';
import { type TestProjectInlineConfiguration, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { PATIENCE_MS } from './test/support/loaded-machine.js';

/**
 * The test files that run in a process of their own, as vitest runs every file by default: each
 * starts a clean Node with nothing loaded. They build, pack, start a PostgreSQL server or other
 * child processes of their own (gateways, the command line, the issuer's crashing children), or
 * replace a module of Node's (`vi.mock`), and most of their time is spent waiting on those. A file
 * that only opens databases on the run's shared server or a PGlite is not one of them: it runs
 * on the shared threads, where its start costs no Node of its own. `npm run test:unit` leaves out
 * all of them but the last (vitest.unit.config.ts).
 */
export const OWN_PROCESS_FILES = [
  'test/package/prepack.test.ts',
  'test/package/packed-package.test.ts',
  'test/package/consumer.test.ts',
  'test/examples/**/*.test.ts',
  'test/postgres/gateway-cluster.test.ts',
  'test/postgres/registry-cluster.test.ts',
  'test/postgres/fleet-cluster.test.ts',
  'test/postgres/one-commit-links.test.ts',
  'test/postgres/postgres-key-history.test.ts',
  'test/postgres/postgres-registry.test.ts',
  'test/postgres/silent-transactions.test.ts',
  'test/issuer/crash.test.ts',
  'test/issuer/built-subpath.test.ts',
  'test/issuer/durable-file.test.ts',
];

/**
 * The longest files, started before the others whatever vitest's cache of durations says (a fresh
 * `npm ci`, as in CI, has none, and vitest then starts the largest files first): started last, one
 * of them would run on alone after every other file has finished.
 */
const START_FIRST = ['test/package/prepack.test.ts', 'test/issuer/crash.test.ts'];

/** Vitest's order (the slowest or the largest files first), with {@link START_FIRST} ahead of it. */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const index = START_FIRST.indexOf(relative(this.ctx.config.root, file.moduleId));
      return index === -1 ? START_FIRST.length : index;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

/** What every test file is given: its timeouts and the pooled keys. */
const EVERY_FILE = {
  environment: 'node' as const,
  // Set for a loaded machine (test/support/loaded-machine.ts), where a test that takes 5 s idle may take 30;
  // PAYGATE_TEST_TIME_SCALE stretches them, with the tests' margins, for a busier machine still.
  testTimeout: 2 * PATIENCE_MS,
  hookTimeout: 4 * PATIENCE_MS,
  // 2048-bit RSA keys made once (kept in .tmp/, test/support/key-pool-once.ts) and handed out by
  // WebCrypto's `generateKey` in every file: fresh keys cost more CPU than anything else.
  setupFiles: ['./test/support/key-pool.ts'],
};

/**
 * The two projects of a run:
 * - `shared`: every other file, on worker threads that each run one file after another with the
 *   modules they loaded kept (vitest's `isolate: false`): loading src/, jose, msw and the
 *   frameworks once per thread instead of once per file took most of these files' CPU. A file
 *   still gets its own module of each test file and setup file, and must leave the process as it
 *   found it (restore its spies, fake timers, globals and listeners, close its servers) — as every
 *   file of a run does anyway.
 * - `own-process`: `ownProcessFiles`, a process each.
 * `leftOut`: files neither project runs.
 * The two pools run side by side, each with up to `maxWorkers` workers: while the files of one
 * wait on child processes, builds and PostgreSQL, the other's use the cores.
 */
export function testProjects(ownProcessFiles: readonly string[], leftOut: readonly string[] = []): TestProjectInlineConfiguration[] {
  return [
    {
      test: {
        ...EVERY_FILE,
        name: 'shared',
        include: ['test/**/*.test.ts'],
        exclude: ['node_modules/**', ...OWN_PROCESS_FILES, ...leftOut],
        pool: 'threads',
        isolate: false,
        // Compile-only type tests (`expectTypeOf`, `@ts-expect-error`) in `*.test-d.ts`, run by `vitest run`.
        // The same tsc reads all of src/ (test/tsconfig.test-d.json), and a type error there fails the
        // run too: this is the one type check of src/ that `npm test` makes, as the build emits
        // declarations without checking (`tsc --noCheck`). The rest of the project (tests, benches,
        // examples) is `npm run typecheck`'s.
        typecheck: {
          enabled: true,
          include: ['test/**/*.test-d.ts'],
          tsconfig: './test/tsconfig.test-d.json',
          ignoreSourceErrors: false,
        },
      },
    },
    {
      test: {
        ...EVERY_FILE,
        name: 'own-process',
        include: [...ownProcessFiles],
        pool: 'forks',
      },
    },
  ];
}

export default defineConfig({
  test: {
    // Two threads of the shared project, one per core, and three processes of the own-process one,
    // whose files spend most of their time waiting on their child processes and servers (with
    // two, that pool ran on alone for 20 s after the threads were done). As many at least as at
    // most: a pool with fewer (vitest's default is one) ends a worker that idles, and the pool of
    // threads, when its last files are running, recycles its workers, and can end the same one
    // twice, failing the run with "Terminating worker thread".
    maxWorkers: 2,
    minWorkers: 2,
    poolOptions: {
      // The worker threads keep what they loaded from one file to the next (see testProjects).
      threads: { isolate: false },
      forks: { isolate: true, maxForks: 3, minForks: 3 },
    },
    // One `npm pack` shared by the tests of the packed package (test/support/pack-once.ts), the
    // pool of RSA keys (test/support/key-pool-once.ts), and one PostgreSQL server for the run,
    // where each test file makes databases of its own from a template database, and one initdb
    // cluster that a test's own server copies (test/support/pg-server-once.ts), and the data
    // directory every PGlite of the tests starts from (test/support/pglite-data-once.ts). Run once
    // for the whole run (not per project), their values reach the files of both projects; started
    // side by side (test/support/side-by-side-setups.ts), as each mostly waits on a child process.
    globalSetup: ['./test/support/side-by-side-setups.ts'],
    projects: testProjects(OWN_PROCESS_FILES),
    sequence: { sequencer: LongestFirst },
  },
});
