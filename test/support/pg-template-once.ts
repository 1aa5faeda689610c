/**
 * One PostgreSQL cluster made per run (vitest `globalSetup`) for every test server to copy:
 * `initdb` costs over a second of CPU, and some sixteen test files start a server of their own
 * (test/postgres/pg-server.ts). Made only where PostgreSQL is installed; removed after the run.
 */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { POSTGRES, initdb, ownedTempDir } from '../postgres/pg-server.js';

export default async function setup(project: TestProject): Promise<() => void> {
  if (!POSTGRES.available) {
    project.provide('pgTemplate', undefined);
    return () => undefined;
  }
  const data = join(await ownedTempDir('paygate-pg-template-'), 'data');
  await initdb(data);
  project.provide('pgTemplate', data);
  return () => rmSync(dirname(data), { recursive: true, force: true });
}
