/**
 * The example gateway's `DATABASE_URL` and tuning, as an operator sets them: a value that cannot
 * be meant, or that the stores refuse, stops the gateway at once, saying which, before anything is
 * written to the database.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOADED_MARGIN_MS, PATIENCE_MS } from '../support/loaded-machine.js';
import { requireBuild, root } from './gateway-processes.js';
import { SCHEMA_VERSIONS, migrate } from '../../src/postgres/index.js';
import { type TestDatabase, createTestDatabase, openPool, skipWithoutPostgres } from './pg-server.js';
import { loginRole, uniqueRole, urlAs } from './roles.js';

const SKIP = skipWithoutPostgres('test/postgres/gateway-settings.test.ts');

let db: TestDatabase;
let stateDir: string;

/** Runs the gateway with `env` added until it exits (or `timeout` ms pass: then `code` is `null`). */
function runGateway(env: Readonly<Record<string, string>>, timeout: number): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['examples/gateway/server.mjs'],
      { cwd: root, env: { ...process.env, PORT: '0', PAYGATE_EXAMPLE_STATE_DIR: stateDir, DATABASE_URL: db?.url ?? '', ...env }, timeout },
      (error, _stdout, stderr) => resolve({ code: error === null ? 0 : ((error as { code?: unknown }).code as number | null), stderr }),
    );
  });
}

/** The tables of the database's `public` schema. */
async function tables(): Promise<string[]> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')",
    );
    return rows.map((row) => row.name);
  } finally {
    await client.end();
  }
}

describe.skipIf(SKIP)('the example gateway started with DATABASE_URL', () => {
  beforeAll(async () => {
    requireBuild();
    db = await createTestDatabase('gateway_settings');
    stateDir = mkdtempSync(join(tmpdir(), 'paygate-settings-'));
  });

  afterAll(() => {
    if (stateDir !== undefined) rmSync(stateDir, { recursive: true, force: true });
  });

  it.each([
    ['a database that does not exist', () => db.url.replace(/\/[^/]+$/, '/no_such_database'), 'database "no_such_database" does not exist'],
    [
      'a role that does not exist',
      () => db.url.replace('postgres://postgres@', 'postgres://nobody:s3cret@'),
      'role "nobody" does not exist',
    ],
  ])('exits 1 in one line naming the host and what the server said, for %s, never the password', async (_label, url, said) => {
    const started = await runGateway({ DATABASE_URL: url() }, PATIENCE_MS);
    expect(started.code).toBe(1);
    expect(started.stderr.trim().split('\n')).toEqual([expect.stringContaining(said)]);
    expect(started.stderr).toContain(`postgres://127.0.0.1:${db.port}/`);
    expect(started.stderr).not.toContain('s3cret');
  });

  it('exits 1 in one line naming the database and both versions when its schema is newer than the gateway knows', async () => {
    const newer = await createTestDatabase('gateway_newer');
    const owner = openPool(newer.url, { max: 1 });
    try {
      await migrate(owner);
      await owner.query(`INSERT INTO paygate_schema_migrations (area, version, description) VALUES ('links', $1, 'from the future')`, [
        SCHEMA_VERSIONS.links + 1,
      ]);
    } finally {
      await owner.end();
    }
    const started = await runGateway({ DATABASE_URL: newer.url }, PATIENCE_MS);
    expect(started.code).toBe(1);
    expect(started.stderr.trim().split('\n')).toEqual([expect.stringContaining(`links schema version ${SCHEMA_VERSIONS.links + 1}`)]);
    expect(started.stderr).toContain(`postgres://127.0.0.1:${newer.port}/`);
  });

  it(
    'exits 2 naming an out-of-range PAYGATE_IDEMPOTENCY_LEASE_MS, having migrated nothing (it hung, retrying on a closed pool)',
    async () => {
      // The start-up itself takes a few seconds on a loaded machine; a hang is cut after the margin.
      const started = await runGateway({ PAYGATE_IDEMPOTENCY_LEASE_MS: '5' }, PATIENCE_MS / 2 + LOADED_MARGIN_MS);
      expect(started.code).toBe(2);
      expect(started.stderr).toMatch(/^PAYGATE_IDEMPOTENCY_LEASE_MS must be /);
      expect(started.stderr).toContain('got "5"');
      expect(await tables()).toEqual([]);
    },
    PATIENCE_MS,
  );
});

describe.skipIf(SKIP)("the example gateway started as the gateway's role of least privilege", () => {
  let least: TestDatabase;
  let behind: TestDatabase;
  let admin: pg.Pool;
  let behindAdmin: pg.Pool;
  let app: string;
  let behindApp: string;

  beforeAll(async () => {
    requireBuild();
    [least, behind] = await Promise.all([createTestDatabase('gateway_least'), createTestDatabase('gateway_behind')]);
    admin = openPool(least.url, { max: 2 });
    behindAdmin = openPool(behind.url, { max: 2 });
    const roles = { gateway: uniqueRole('gateway'), operator: uniqueRole('operator') };
    await migrate(admin, { roles });
    app = await loginRole(admin, 'gateway_app', [roles.gateway]);
    // The owner has migrated the links alone: the other areas are for the owner to create.
    const behindRoles = { gateway: uniqueRole('gateway'), operator: uniqueRole('operator') };
    await migrate(behindAdmin, { only: 'links', roles: behindRoles });
    behindApp = await loginRole(behindAdmin, 'gateway_app', [behindRoles.gateway]);
    stateDir = mkdtempSync(join(tmpdir(), 'paygate-settings-'));
  });

  afterAll(async () => {
    await admin?.end();
    await behindAdmin?.end();
    if (stateDir !== undefined) rmSync(stateDir, { recursive: true, force: true });
  });

  it('exits 1 in one line naming its role when the registry is empty and the role may not seed it', async () => {
    const started = await runGateway({ DATABASE_URL: urlAs(least.url, app) }, PATIENCE_MS);
    expect(started.code).toBe(1);
    expect(started.stderr.trim().split('\n')).toEqual([expect.stringContaining(`role "${app}"`)]);
    expect(started.stderr).toContain(`postgres://127.0.0.1:${least.port}/`);
    const { rows } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM paygate_issuers');
    expect(rows[0]?.n).toBe(0);
  });

  it('exits 1 in one line naming its role when the role is granted nothing, not even to read the schema ledger', async () => {
    const nothing = await loginRole(admin, 'granted_nothing');
    const started = await runGateway({ DATABASE_URL: urlAs(least.url, nothing) }, PATIENCE_MS);
    expect(started.code).toBe(1);
    expect(started.stderr.trim().split('\n')).toEqual([expect.stringContaining(`role "${nothing}"`)]);
    expect(started.stderr).toContain('paygate_schema_migrations');
    expect(started.stderr).toContain(`postgres://127.0.0.1:${least.port}/`);
  });

  it('exits 1 in one line naming its role when the schema is behind and the role may not migrate it', async () => {
    const started = await runGateway({ DATABASE_URL: urlAs(behind.url, behindApp) }, PATIENCE_MS);
    expect(started.code).toBe(1);
    expect(started.stderr.trim().split('\n')).toEqual([expect.stringContaining(`role "${behindApp}"`)]);
    expect(started.stderr).toContain(`postgres://127.0.0.1:${behind.port}/`);
  });
});

describe('the example gateway with a DATABASE_URL that is no postgres:// URL', () => {
  beforeAll(() => {
    requireBuild();
    stateDir = mkdtempSync(join(tmpdir(), 'paygate-settings-'));
  });

  afterAll(() => {
    if (stateDir !== undefined) rmSync(stateDir, { recursive: true, force: true });
  });

  it.each([
    ['without its scheme', 'localhost:5432/payments', '"localhost:"'],
    ['with a misspelt scheme', 'postgress://gateway:s3cret@127.0.0.1:5432/payments', '"postgress:"'],
    ['with a user and password but no scheme', 'gateway:s3cret@127.0.0.1:5432/payments', '"gateway:"'],
    ['that is no URL', '127.0.0.1:5432/payments', 'no URL'],
  ])('is refused %s, exit code 2, in one line naming what was found and never the password', async (_label, url, found) => {
    const started = await runGateway({ DATABASE_URL: url }, PATIENCE_MS);
    expect(started.code).toBe(2);
    expect(started.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^DATABASE_URL must be a postgres:\/\/ URL/)]);
    expect(started.stderr).toContain(found);
    expect(started.stderr).not.toContain('s3cret');
  });
});
