/** migrate(): creates the schema, is idempotent, and runs safely from several instances at once. */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION, TABLES, migrate } from '../../src/postgres/index.js';
import { type PgServer, openPool, skipWithoutPostgres, startPostgres } from './pg-server.js';

const SKIP = skipWithoutPostgres('test/postgres/migrate.test.ts');
let server: PgServer;
const pools: pg.Pool[] = [];

async function freshPool(name: string): Promise<pg.Pool> {
  const pool = openPool(await server.createDatabase(name));
  pools.push(pool);
  return pool;
}

describe.skipIf(SKIP)('migrate', () => {
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.end()));
    await server?.dispose();
  });

  it('creates every table on an empty database, then finds nothing left to do', async () => {
    const pool = await freshPool('fresh');
    expect(await migrate(pool)).toEqual({ applied: [1], version: SCHEMA_VERSION });
    expect(await migrate(pool)).toEqual({ applied: [], version: SCHEMA_VERSION });
    const { rows } = await pool.query(`SELECT tablename FROM pg_tables WHERE tablename LIKE 'paygate_%' ORDER BY tablename`);
    expect(rows.map((row) => row.tablename)).toEqual(Object.values(TABLES).sort());
  });

  it('applies each version once when instances migrate at the same moment', async () => {
    const url = await server.createDatabase('together');
    const instances = Array.from({ length: 4 }, () => openPool(url, { max: 2 }));
    pools.push(...instances);
    const reports = await Promise.all(instances.map((pool) => migrate(pool)));
    expect(reports.map((report) => report.applied).sort()).toEqual([[], [], [], [1]]);
  });

  it('refuses a database whose schema is newer than this package', async () => {
    const pool = await freshPool('newer');
    await migrate(pool);
    await pool.query(`INSERT INTO ${TABLES.migrations} (version, description) VALUES ($1, 'from the future')`, [SCHEMA_VERSION + 1]);
    await expect(migrate(pool)).rejects.toThrow(`schema version ${SCHEMA_VERSION + 1}`);
  });

  it('runs on a single pg.Client as well as on a pool', async () => {
    const url = await server.createDatabase('single');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      expect((await migrate(client)).applied).toEqual([1]);
    } finally {
      await client.end();
    }
  });

  it('refuses something that is not a client with a TypeError', async () => {
    await expect(migrate({} as never)).rejects.toThrow(TypeError);
  });
});
