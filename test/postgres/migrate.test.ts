/**
 * migrate(): each area (links, controls, directory, registry, keys) is created and versioned on its
 * own, a database migrated by the single-version schema upgrades without loss, and instances
 * migrating at once apply each version once.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { SCHEMA_AREAS, SCHEMA_VERSIONS, TABLES, migrate } from '../../src/postgres/index.js';
import { createTestDatabase, openPool, skipWithoutPostgres } from './pg-server.js';

const SKIP = skipWithoutPostgres('test/postgres/migrate.test.ts');
const pools: pg.Pool[] = [];

const LINK_TABLES = [TABLES.idempotency, TABLES.links];
const CONTROL_TABLES = [TABLES.controls, TABLES.controlsCompacted];
const DIRECTORY_TABLES = [TABLES.tenants, TABLES.departments, TABLES.shoppers, TABLES.stores];
const REGISTRY_TABLES = [TABLES.issuers, TABLES.issuerChanges];

async function freshPool(name: string): Promise<pg.Pool> {
  const pool = openPool((await createTestDatabase(name)).url);
  pools.push(pool);
  return pool;
}

async function tables(pool: pg.Pool): Promise<string[]> {
  const { rows } = await pool.query(
    `SELECT tablename FROM pg_tables WHERE tablename LIKE 'paygate_%' AND tablename <> $1 ORDER BY tablename`,
    [TABLES.migrations],
  );
  return rows.map((row) => row.tablename as string);
}

/** The tables and the ledger an earlier paygate-auth (one version for everything) left behind. */
async function versionOneDatabase(pool: pg.Pool): Promise<void> {
  await migrate(pool, { only: ['links', 'controls'] });
  await pool.query(`DROP TABLE ${TABLES.controlsCompacted}`);
  await pool.query(`DROP TABLE ${TABLES.migrations}`);
  await pool.query(
    `CREATE TABLE ${TABLES.migrations} (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
  );
  await pool.query(
    `INSERT INTO ${TABLES.migrations} (version, description, applied_at) VALUES (1, 'payment links, idempotency keys, operator controls', '2026-01-02T03:04:05Z')`,
  );
}

describe.skipIf(SKIP)('migrate', () => {
  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.end()));
  });

  it('creates every area on an empty database, then finds nothing left to do', async () => {
    const pool = await freshPool('fresh');
    const first = await migrate(pool);
    expect(first.applied).toEqual([
      { area: 'links', version: 1 },
      { area: 'controls', version: 1 },
      { area: 'controls', version: 2 },
      { area: 'directory', version: 1 },
      { area: 'registry', version: 1 },
      { area: 'keys', version: 1 },
    ]);
    expect(first.versions).toEqual(SCHEMA_VERSIONS);
    expect(await migrate(pool)).toEqual({ applied: [], versions: SCHEMA_VERSIONS });
    expect(await tables(pool)).toEqual(
      [...LINK_TABLES, ...CONTROL_TABLES, ...DIRECTORY_TABLES, ...REGISTRY_TABLES, TABLES.keyHistory].sort(),
    );
  });

  it('creates the operator-controls tables alone, without the payment tables', async () => {
    const pool = await freshPool('controls_only');
    expect((await migrate(pool, { only: 'controls' })).versions).toEqual({ controls: SCHEMA_VERSIONS.controls });
    expect(await tables(pool)).toEqual([...CONTROL_TABLES].sort());
  });

  it('creates the issuer registry tables alone', async () => {
    const pool = await freshPool('registry_only');
    expect((await migrate(pool, { only: 'registry' })).versions).toEqual({ registry: SCHEMA_VERSIONS.registry });
    expect(await tables(pool)).toEqual([...REGISTRY_TABLES].sort());
  });

  it('creates the payment tables alone, without the operator-controls tables', async () => {
    const pool = await freshPool('links_only');
    expect((await migrate(pool, { only: 'links' })).versions).toEqual({ links: SCHEMA_VERSIONS.links });
    expect(await tables(pool)).toEqual([...LINK_TABLES].sort());
  });

  it('upgrades a version-1 database without loss, then migrates controls alone and links alone', async () => {
    const pool = await freshPool('version_one');
    await versionOneDatabase(pool);
    await pool.query(`INSERT INTO ${TABLES.controls} (action, issuer) VALUES ('suspend_issuer', 'https://acme.test')`);
    await pool.query(`INSERT INTO ${TABLES.links} (id, tenant, link_code, record) VALUES (gen_random_uuid(), 't', 'code-1', '{}')`);

    expect(await migrate(pool, { only: 'controls' })).toEqual({
      applied: [{ area: 'controls', version: 2 }],
      versions: { controls: 2 },
    });
    expect(await migrate(pool, { only: 'links' })).toEqual({ applied: [], versions: { links: 1 } });
    expect(await tables(pool)).toEqual([...LINK_TABLES, ...CONTROL_TABLES].sort());
    const ledger = await pool.query(`SELECT area, version, applied_at FROM ${TABLES.migrations} ORDER BY area, version`);
    expect(
      ledger.rows.map((row) => [row.area, row.version, (row.applied_at as Date).toISOString() === '2026-01-02T03:04:05.000Z']),
    ).toEqual([
      ['controls', 1, true],
      ['controls', 2, false],
      ['links', 1, true],
    ]);
    expect((await pool.query(`SELECT issuer FROM ${TABLES.controls}`)).rows).toEqual([{ issuer: 'https://acme.test' }]);
    expect((await pool.query(`SELECT link_code FROM ${TABLES.links}`)).rows).toEqual([{ link_code: 'code-1' }]);
  });

  it('applies each version once when instances migrate at the same moment', async () => {
    const { url } = await createTestDatabase('together');
    const instances = Array.from({ length: 4 }, () => openPool(url, { max: 2 }));
    pools.push(...instances);
    const reports = await Promise.all(instances.map((pool) => migrate(pool)));
    expect(reports.map((report) => report.applied.length).sort()).toEqual([0, 0, 0, 6]);
  });

  it('refuses a database whose area is newer than this package', async () => {
    const pool = await freshPool('newer');
    await migrate(pool);
    await pool.query(`INSERT INTO ${TABLES.migrations} (area, version, description) VALUES ('controls', $1, 'from the future')`, [
      SCHEMA_VERSIONS.controls + 1,
    ]);
    await expect(migrate(pool, { only: 'controls' })).rejects.toThrow(`controls schema version ${SCHEMA_VERSIONS.controls + 1}`);
    expect((await migrate(pool, { only: 'links' })).applied).toEqual([]);
  });

  it('runs on a single pg.Client as well as on a pool', async () => {
    const { url } = await createTestDatabase('single');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      expect((await migrate(client)).applied).toHaveLength(6);
    } finally {
      await client.end();
    }
  });

  it('refuses something that is not a client, and an unknown area, with a TypeError', async () => {
    await expect(migrate({} as never)).rejects.toThrow(TypeError);
    const pool = await freshPool('unknown_area');
    await expect(migrate(pool, { only: 'payments' as never })).rejects.toThrow(
      new TypeError(`migrate: only must name one or more of ${SCHEMA_AREAS.join(', ')}, got "payments"`),
    );
  });

  it('refuses a statementTimeout that is not whole milliseconds from 10 to 600000 with a TypeError naming it, touching nothing', async () => {
    const pool = await freshPool('bad_timeout');
    for (const statementTimeout of [0, 9, 1.5, 600_001, Number.NaN]) {
      await expect(migrate(pool, { statementTimeout })).rejects.toThrow(
        /^migrate: statementTimeout must be a whole number of milliseconds/,
      );
    }
    expect(await tables(pool)).toEqual([]);
  });
});
