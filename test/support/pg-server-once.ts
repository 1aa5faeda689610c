/**
 * PostgreSQL for the run (vitest `globalSetup`), where it is installed:
 * - one cluster made by `initdb`, which every server of a test's own copies (`initdb` costs over
 *   a second of CPU);
 * - one shared server, a copy of it, with an empty template database: each test file creates its
 *   databases there (`createTestDatabase()` of test/postgres/pg-server.ts) instead of starting a
 *   server.
 * Both are removed after the run.
 */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { POSTGRES, initdb, ownedTempDir, shareServer, startPostgres } from '../postgres/pg-server.js';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (!POSTGRES.available) {
    project.provide('pgTemplate', undefined);
    project.provide('pgServer', undefined);
    return async () => undefined;
  }
  const data = join(await ownedTempDir('paygate-pg-template-'), 'data');
  await initdb(data);
  const server = await startPostgres(data);
  try {
    project.provide('pgServer', await shareServer(server));
  } catch (error) {
    await server.dispose();
    throw error;
  }
  project.provide('pgTemplate', data);
  return async () => {
    await server.dispose();
    rmSync(dirname(data), { recursive: true, force: true });
  };
}
