/**
 * The run's global set-ups side by side (vitest `globalSetup`): the pack, the key pool, the
 * PostgreSQL server and the PGlite data each wait on child processes or the disk (`npm pack`,
 * `initdb`, key generation on a fresh clone), and vitest runs the files of `globalSetup` one after
 * another. A set-up that fails fails the run, after the teardowns of those that succeeded; the
 * teardowns run side by side too.
 */
import type { TestProject } from 'vitest/node';
import keyPool from './key-pool-once.js';
import pack from './pack-once.js';
import pgServer from './pg-server-once.js';
import pgliteData from './pglite-data-once.js';

type Teardown = (() => unknown) | undefined;

/** Runs every teardown, whichever fails; rejects with the first failure after all have run. */
async function tearDown(teardowns: readonly Teardown[]): Promise<void> {
  const settled = await Promise.allSettled(teardowns.map(async (teardown) => teardown?.()));
  const failed = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const settled = await Promise.allSettled(
    [pack, keyPool, pgServer, pgliteData].map(async (each): Promise<Teardown> => {
      const teardown: unknown = await each(project);
      return typeof teardown === 'function' ? (teardown as () => unknown) : undefined;
    }),
  );
  const teardowns = settled.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
  const failed = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed !== undefined) {
    await tearDown(teardowns);
    throw failed.reason;
  }
  return () => tearDown(teardowns);
}
