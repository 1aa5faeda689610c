/** The PGlite of a test file: an empty database, started from the run's data directory. */
import { existsSync, readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { inject } from 'vitest';
import { eventually } from './eventually.js';

/**
 * A new PGlite holding an empty database, as `new PGlite()` makes, loaded from the archive that
 * the run made once (test/support/pglite-data-once.ts) rather than by an `initdb` of its own.
 * Waits for the archive while the run is still making it; without the run's set-up (a config
 * that lacks it), makes one from scratch.
 */
export async function createTestPglite(): Promise<PGlite> {
  const archive = inject('pgliteData');
  if (archive === undefined) return new PGlite();
  const failed = `${archive}.failed`;
  await eventually(`the run's PGlite data directory at ${archive}`, () => existsSync(archive) || existsSync(failed));
  if (!existsSync(archive)) throw new Error(`the run could not make PGlite's data directory: ${readFileSync(failed, 'utf8')}`);
  const db = new PGlite({ loadDataDir: new Blob([readFileSync(archive)]) });
  await db.waitReady;
  return db;
}
