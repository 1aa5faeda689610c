/**
 * migrate(): each area (links, controls, directory, registry, keys) is created and versioned on its
 * own, a database migrated by the single-version schema upgrades without loss, and instances
 * migrating at once apply each version once.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { SCHEMA_AREAS } from '../../src/postgres/internal.js';
import { MIGRATION_LOCK } from '../../src/postgres/schema.js';
import {
  MigrationError,
  SCHEMA_VERSIONS,
  StatementTimeoutError,
  migrate,
  readIssuerChanges,
  readIssuers,
} from '../../src/postgres/index.js';
import { TABLES } from '../../src/postgres/schema-names.js';
import { createTestDatabase, openPool, skipWithoutPostgres } from './pg-server.js';
import { loginRole, urlAs } from './roles.js';

const SKIP = skipWithoutPostgres('test/postgres/migrate.test.ts');
const pools: pg.Pool[] = [];

const LINK_TABLES = [TABLES.idempotency, TABLES.links];
const CONTROL_TABLES = [TABLES.controls, TABLES.controlsCompacted];
const DIRECTORY_TABLES = [TABLES.tenants, TABLES.departments, TABLES.shoppers, TABLES.stores];
const REGISTRY_TABLES = [TABLES.issuers, TABLES.issuerChanges];
/** How many versions a fresh database gets: every version of every area. */
const APPLIED_FRESH = Object.values(SCHEMA_VERSIONS).reduce((sum, version) => sum + version, 0);

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
  await pool.query('DROP FUNCTION paygate_compact_controls()');
  await pool.query('DROP FUNCTION paygate_operator_controls_stamp() CASCADE');
  await pool.query('DROP FUNCTION paygate_operator_controls_unchanged() CASCADE');
  await pool.query('DROP FUNCTION paygate_operator_controls_mark() CASCADE');
  await pool.query('DROP FUNCTION paygate_operator_controls_kept() CASCADE');
  await pool.query(`DROP SEQUENCE ${TABLES.controls}_ids`);
  await pool.query(`ALTER TABLE ${TABLES.controls} ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY`);
  await pool.query(`ALTER TABLE ${TABLES.controls} DROP CONSTRAINT ${TABLES.controls}_text`);
  await pool.query(`ALTER TABLE ${TABLES.links} DROP CONSTRAINT ${TABLES.links}_record`);
  await pool.query(`ALTER TABLE ${TABLES.idempotency} DROP CONSTRAINT ${TABLES.idempotency}_response`);
  await pool.query(`ALTER TABLE ${TABLES.idempotency} DROP COLUMN link_id`);
  await pool.query(`DROP TABLE ${TABLES.migrations}`);
  await pool.query(
    `CREATE TABLE ${TABLES.migrations} (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
  );
  await pool.query(
    `INSERT INTO ${TABLES.migrations} (version, description, applied_at) VALUES (1, 'payment links, idempotency keys, operator controls', '2026-01-02T03:04:05Z')`,
  );
}

/** The registry tables and ledger row of registry version 1: one issuer added by `addIssuer` then, and a decoy row by hand. */
async function registryVersionOne(pool: pg.Pool): Promise<void> {
  await pool.query(`CREATE TABLE ${TABLES.migrations} (area text NOT NULL, version integer NOT NULL, description text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (area, version))`);
  await pool.query(
    `INSERT INTO ${TABLES.migrations} (area, version, description) VALUES ('registry', 1, 'issuer registry and its audit trail')`,
  );
  await pool.query(`CREATE TABLE ${TABLES.issuers} (issuer text PRIMARY KEY, entry jsonb NOT NULL, added_at timestamptz NOT NULL,
    added_by text NOT NULL, updated_at timestamptz NOT NULL, updated_by text NOT NULL)`);
  await pool.query(`CREATE TABLE ${TABLES.issuerChanges} (id bigserial PRIMARY KEY, issuer text NOT NULL,
    action text NOT NULL CHECK (action IN ('add', 'update', 'remove')), before jsonb, after jsonb,
    at timestamptz NOT NULL DEFAULT now(), actor text NOT NULL)`);
  const entry = { issuer: 'https://acme.test', jwksUri: 'https://acme.test/jwks.json', products: ['acme'] };
  await pool.query(`INSERT INTO ${TABLES.issuers} VALUES ($1, $2, now(), 'alice', now(), 'alice')`, [entry.issuer, JSON.stringify(entry)]);
  await pool.query(`INSERT INTO ${TABLES.issuers} VALUES ('decoy', $1, now(), 'mallory', now(), 'mallory')`, [JSON.stringify(entry)]);
  await pool.query(`INSERT INTO ${TABLES.issuerChanges} (issuer, action, after, actor) VALUES ($1, 'add', $2, 'alice')`, [
    entry.issuer,
    JSON.stringify(entry),
  ]);
}

/** `from` to `to`, both included. */
function* range(from: number, to: number): Generator<number> {
  for (let value = from; value <= to; value++) yield value;
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
      { area: 'links', version: 2 },
      { area: 'links', version: 3 },
      { area: 'controls', version: 1 },
      { area: 'controls', version: 2 },
      { area: 'controls', version: 3 },
      { area: 'controls', version: 4 },
      { area: 'controls', version: 5 },
      { area: 'controls', version: 6 },
      { area: 'controls', version: 7 },
      { area: 'controls', version: 8 },
      { area: 'controls', version: 9 },
      { area: 'controls', version: 10 },
      { area: 'directory', version: 1 },
      { area: 'directory', version: 2 },
      { area: 'registry', version: 1 },
      { area: 'registry', version: 2 },
      { area: 'registry', version: 3 },
      { area: 'registry', version: 4 },
      { area: 'registry', version: 5 },
      { area: 'keys', version: 1 },
      { area: 'keys', version: 2 },
      { area: 'keys', version: 3 },
      { area: 'keys', version: 4 },
      { area: 'keys', version: 5 },
      { area: 'fleet', version: 1 },
      { area: 'fleet', version: 2 },
      { area: 'fleet', version: 3 },
    ]);
    expect(first.versions).toEqual(SCHEMA_VERSIONS);
    expect(await migrate(pool)).toEqual({ applied: [], versions: SCHEMA_VERSIONS });
    expect(await tables(pool)).toEqual(
      [...LINK_TABLES, ...CONTROL_TABLES, ...DIRECTORY_TABLES, ...REGISTRY_TABLES, TABLES.keyHistory, TABLES.instances].sort(),
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
      applied: [
        { area: 'controls', version: 2 },
        { area: 'controls', version: 3 },
        { area: 'controls', version: 4 },
        { area: 'controls', version: 5 },
        { area: 'controls', version: 6 },
        { area: 'controls', version: 7 },
        { area: 'controls', version: 8 },
        { area: 'controls', version: 9 },
        { area: 'controls', version: 10 },
      ],
      versions: { controls: 10 },
    });
    expect(await migrate(pool, { only: 'links' })).toEqual({
      applied: [
        { area: 'links', version: 2 },
        { area: 'links', version: 3 },
      ],
      versions: { links: 3 },
    });
    expect(await tables(pool)).toEqual([...LINK_TABLES, ...CONTROL_TABLES].sort());
    const ledger = await pool.query(`SELECT area, version, applied_at FROM ${TABLES.migrations} ORDER BY area, version`);
    expect(
      ledger.rows.map((row) => [row.area, row.version, (row.applied_at as Date).toISOString() === '2026-01-02T03:04:05.000Z']),
    ).toEqual([
      ['controls', 1, true],
      ['controls', 2, false],
      ['controls', 3, false],
      ['controls', 4, false],
      ['controls', 5, false],
      ['controls', 6, false],
      ['controls', 7, false],
      ['controls', 8, false],
      ['controls', 9, false],
      ['controls', 10, false],
      ['links', 1, true],
      ['links', 2, false],
      ['links', 3, false],
    ]);
    expect((await pool.query(`SELECT issuer FROM ${TABLES.controls}`)).rows).toEqual([{ issuer: 'https://acme.test' }]);
    // The id sequence taken over from the identity goes on past the row written before.
    const next = await pool.query(
      `INSERT INTO ${TABLES.controls} (action, issuer) VALUES ('resume_issuer', 'https://acme.test') RETURNING id`,
    );
    expect(Number(next.rows[0].id)).toBe(2);
    expect((await pool.query(`SELECT link_code FROM ${TABLES.links}`)).rows).toEqual([{ link_code: 'code-1' }]);
  });

  it.each([
    ['U+0000', 'a\u0000b'],
    ['a lone surrogate', 'a\ud800b'],
  ])('applies links version 3 over a link stored before it whose description holds %s (which ->> cannot read)', async (_, description) => {
    const pool = await freshPool('links_two');
    await migrate(pool, { only: 'links' });
    // Links version 2, as it was: the handler then stored such a description.
    await pool.query(`ALTER TABLE ${TABLES.links} DROP CONSTRAINT ${TABLES.links}_record`);
    await pool.query(`ALTER TABLE ${TABLES.idempotency} DROP CONSTRAINT ${TABLES.idempotency}_response`);
    await pool.query(`DELETE FROM ${TABLES.migrations} WHERE area = 'links' AND version = 3`);
    const id = '0b7c5a52-58a1-4a8e-9d62-1b1f6e0c2a11';
    const record = JSON.stringify({ id, tenant: 't', link_code: 'code-1', description });
    await pool.query(`INSERT INTO ${TABLES.links} (id, tenant, link_code, record) VALUES ($1, 't', 'code-1', $2)`, [id, record]);

    expect(await migrate(pool, { only: 'links' })).toEqual({ applied: [{ area: 'links', version: 3 }], versions: { links: 3 } });
    expect((await pool.query(`SELECT record::text AS record FROM ${TABLES.links}`)).rows).toEqual([{ record }]);
  });

  it('applies registry version 4 over a row whose issuer is longer than 2048 characters: the row kept, and left out', async () => {
    const pool = await freshPool('registry_three');
    await migrate(pool, { only: 'registry' });
    await pool.query(`ALTER TABLE ${TABLES.issuers} DROP CONSTRAINT ${TABLES.issuers}_issuer_length`);
    await pool.query(`DELETE FROM ${TABLES.migrations} WHERE area = 'registry' AND version >= 4`);
    await pool.query(`ALTER TABLE ${TABLES.issuerChanges} ALTER COLUMN id SET DEFAULT nextval('${TABLES.issuerChanges}_id_seq')`);
    await pool.query('DROP FUNCTION paygate_issuer_change_id()');
    const issuer = `https://acme.test/${'a'.repeat(3000 - 18)}`;
    const entry = { issuer, jwksUri: 'https://acme.test/jwks.json', products: ['acme'] };
    await pool.query(`INSERT INTO ${TABLES.issuers} (issuer, entry) VALUES ($1, $2)`, [issuer, JSON.stringify(entry)]);

    expect((await migrate(pool, { only: 'registry' })).applied).toEqual([
      { area: 'registry', version: 4 },
      { area: 'registry', version: 5 },
    ]);
    expect((await readIssuers(pool)).map((record) => [record.issuer.length, record.refused?.rule])).toEqual([[3000, 'invalid_entry']]);
  });

  it('upgrades a registry of version 1 forward: its rows and audit kept, later changes audited by the database', async () => {
    const pool = await freshPool('registry_one');
    await registryVersionOne(pool);
    expect(await migrate(pool, { only: 'registry' })).toEqual({
      applied: [...range(2, SCHEMA_VERSIONS.registry)].map((version) => ({ area: 'registry', version })),
      versions: { registry: SCHEMA_VERSIONS.registry },
    });
    const kept = await readIssuerChanges(pool);
    expect(kept).toEqual([expect.objectContaining({ id: 1, action: 'add', actor: 'alice', role: null })]);
    // The decoy row written then is kept, and marked; a new one is refused by the schema.
    expect((await readIssuers(pool)).map((record) => [record.issuer, record.refused?.rule])).toEqual([
      ['decoy', 'key_mismatch'],
      ['https://acme.test', 'repeated_issuer'],
    ]);
    await expect(
      pool.query(`INSERT INTO ${TABLES.issuers} (issuer, entry) SELECT 'decoy-2', entry FROM ${TABLES.issuers} LIMIT 1`),
    ).rejects.toMatchObject({
      code: '23514',
    });
    await pool.query(`DELETE FROM ${TABLES.issuers} WHERE issuer = 'https://acme.test'`);
    expect((await readIssuerChanges(pool)).slice(1)).toEqual([
      expect.objectContaining({ id: 2, action: 'remove', issuer: 'https://acme.test', actor: null, role: 'postgres' }),
    ]);
  });

  it('applies each version once when instances migrate at the same moment', async () => {
    const { url } = await createTestDatabase('together');
    const instances = Array.from({ length: 4 }, () => openPool(url, { max: 2 }));
    pools.push(...instances);
    const reports = await Promise.all(instances.map((pool) => migrate(pool)));
    expect(reports.map((report) => report.applied.length).sort()).toEqual([0, 0, 0, APPLIED_FRESH]);
  });

  it('refuses a database whose area is newer than this package with schema_newer, naming both versions', async () => {
    const pool = await freshPool('newer');
    await migrate(pool);
    await pool.query(`INSERT INTO ${TABLES.migrations} (area, version, description) VALUES ('controls', $1, 'from the future')`, [
      SCHEMA_VERSIONS.controls + 1,
    ]);
    const refusal = await migrate(pool, { only: 'controls' }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(MigrationError);
    expect(refusal).toMatchObject({
      code: 'schema_newer',
      area: 'controls',
      found: SCHEMA_VERSIONS.controls + 1,
      known: SCHEMA_VERSIONS.controls,
    });
    expect((await migrate(pool, { only: 'links' })).applied).toEqual([]);
  });

  it('refuses a single-version ledger of a version other than 1 with schema_newer, naming the version found', async () => {
    const pool = await freshPool('newer_single');
    await versionOneDatabase(pool);
    await pool.query(`UPDATE ${TABLES.migrations} SET version = 2`);
    const refusal = await migrate(pool).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(MigrationError);
    expect(refusal).toMatchObject({ code: 'schema_newer', area: undefined, found: 2, known: 1 });
  });

  it('refuses tables that exist without their ledger with ledger_missing, naming the area and version, the server refusal as cause', async () => {
    const pool = await freshPool('ledger_dropped');
    await migrate(pool, { only: 'links' });
    await pool.query(`DROP TABLE ${TABLES.migrations}`);
    const refusal = await migrate(pool, { only: 'links' }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(MigrationError);
    expect(refusal).toMatchObject({
      code: 'ledger_missing',
      area: 'links',
      version: 1,
      found: 0,
      tables: [TABLES.migrations],
      cause: { code: '42P07' },
    });
    expect((refusal as Error).message).toContain(`relation "${TABLES.links}" already exists`);
    expect(await tables(pool)).toEqual(LINK_TABLES);
  });

  it('refuses a ledger emptied of an area whose tables exist with ledger_behind, naming the version it records', async () => {
    const pool = await freshPool('ledger_emptied');
    await migrate(pool, { only: 'controls' });
    await pool.query(`DELETE FROM ${TABLES.migrations} WHERE area = 'controls' AND version > 1`);
    const refusal = await migrate(pool, { only: 'controls' }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(MigrationError);
    expect(refusal).toMatchObject({ code: 'ledger_behind', area: 'controls', version: 2, found: 1, known: SCHEMA_VERSIONS.controls });
  });

  it('refuses a role granted nothing with ledger_denied, naming the role and the ledger, the server 42501 as cause', async () => {
    const { url } = await createTestDatabase('ledger_denied');
    const pool = openPool(url, { max: 1 });
    pools.push(pool);
    await migrate(pool);
    const role = await loginRole(pool, 'no_grants');
    const denied = openPool(urlAs(url, role), { max: 1 });
    pools.push(denied);
    const refusal = await migrate(denied).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(MigrationError);
    expect(refusal).toMatchObject({ code: 'ledger_denied', role, tables: [TABLES.migrations], cause: { code: '42501' } });
  });

  it('refuses a role that may not create the missing ledger with ledger_denied, the server 42501 as cause', async () => {
    const { url } = await createTestDatabase('ledger_create_denied');
    const pool = openPool(url, { max: 1 });
    pools.push(pool);
    const role = await loginRole(pool, 'no_create');
    const denied = openPool(urlAs(url, role), { max: 1 });
    pools.push(denied);
    const refusal = await migrate(denied).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(MigrationError);
    expect(refusal).toMatchObject({ code: 'ledger_denied', role, tables: [TABLES.migrations], cause: { code: '42501' } });
    expect(await tables(pool)).toEqual([]);
  });

  it('refuses a role that may use no schema of its search_path with no_schema, naming the role and the search_path', async () => {
    const { url } = await createTestDatabase('no_schema');
    const pool = openPool(url, { max: 1 });
    pools.push(pool);
    const role = await loginRole(pool, 'no_usage');
    await pool.query(`REVOKE USAGE ON SCHEMA public FROM PUBLIC, ${role}`);
    const denied = openPool(urlAs(url, role), { max: 1 });
    pools.push(denied);
    const refusal = await migrate(denied).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(MigrationError);
    expect(refusal).toMatchObject({ code: 'no_schema', role, searchPath: '"$user", public' });
    expect(await tables(pool)).toEqual([]);
  });

  it("names the search_path's own schema, not public, in no_schema's GRANT remedy", async () => {
    const { url } = await createTestDatabase('no_schema_other');
    const pool = openPool(url, { max: 1 });
    pools.push(pool);
    const role = await loginRole(pool, 'no_usage_payments');
    await pool.query('CREATE SCHEMA payments');
    await pool.query(`ALTER ROLE ${role} SET search_path = payments`);
    const denied = openPool(urlAs(url, role), { max: 1 });
    pools.push(denied);
    const refusal = await migrate(denied).catch((error: unknown) => error);
    expect(refusal).toMatchObject({ code: 'no_schema', role, searchPath: 'payments' });
    expect((refusal as Error).message).toContain('ON SCHEMA payments TO');
    expect((refusal as Error).message).not.toContain('ON SCHEMA public');
  });

  it("rejects with a StatementTimeoutError, the server's 57014 as cause, when statement_timeout fires waiting for the migration lock", async () => {
    const { url } = await createTestDatabase('lock_wait');
    const holder = new pg.Client({ connectionString: url });
    // A single connection is bounded by its own settings: here the server's statement_timeout alone.
    const waiter = new pg.Client({ connectionString: url, statement_timeout: 200 });
    await Promise.all([holder.connect(), waiter.connect()]);
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      const refusal = await migrate(waiter).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(StatementTimeoutError);
      expect(refusal).toMatchObject({ code: 'statement_timeout', cause: { code: '57014' } });
      expect((refusal as Error).message).toContain('57014');
      const { rows } = await holder.query(`SELECT count(*)::int AS n FROM pg_tables WHERE tablename LIKE 'paygate_%'`);
      expect(rows[0]?.n).toBe(0);
    } finally {
      await Promise.all([holder.end(), waiter.end()]);
    }
  });

  it('runs on a single pg.Client as well as on a pool', async () => {
    const { url } = await createTestDatabase('single');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      expect((await migrate(client)).applied).toHaveLength(APPLIED_FRESH);
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
