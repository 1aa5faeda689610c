/**
 * Least privilege, on a real PostgreSQL: `migrate({ roles })` sets up the gateway's role and the
 * operator's, and each is held to its part. The gateway's may not write the registry, the
 * controls nor the audit, yet does its whole work; the operator's changes the registry and the
 * controls; nobody changes the audit. Role names are unique to this file (roles are cluster-wide).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IssuerRegistry, createVerifier } from '../../src/index.js';
import { randomIds } from '../../src/payment-links/index.js';
import { DEFAULT_ROLES, SCHEMA_AREAS, compactControls, readFleet, readKeyHistory, recordControl } from '../../src/postgres/internal.js';
import {
  MigrationError,
  type MigrationReport,
  PostgresDirectory,
  PostgresIdempotencyStore,
  PostgresPaymentLinkStore,
  SCHEMA_VERSIONS,
  addIssuer,
  migrate,
  postgresControls,
  postgresHeartbeat,
  postgresKeyHistory,
  postgresRegistry,
  readIssuerChanges,
} from '../../src/postgres/index.js';
import { TABLES } from '../../src/postgres/schema-names.js';
import { type TestIssuer, createTestIssuer } from '../../src/testing/index.js';
import { SEEDS, TENANT_A, jsonRequest, makeHandler, useCallers, validBody } from '../payment-links/support.js';
import { grantStatements } from '../../src/postgres/schema-roles.js';
import { eventually } from './eventually.js';
import { root } from './gateway-processes.js';
import { createTestDatabase, openPool, skipWithoutPostgres } from './pg-server.js';
import { loginRole, uniqueRole, urlAs } from './roles.js';

const SKIP = skipWithoutPostgres('test/postgres/least-privilege.test.ts');
const AUDIENCE = 'https://payments.test';
const callers = useCallers();

let url: string;
let admin: pg.Pool;
let gateway: pg.Pool;
let operator: pg.Pool;
let roles: { gateway: string; operator: string };
let report: MigrationReport;
let acme: TestIssuer;

/** The SQLSTATE `statement` fails with on `pool`, or `'ok'`. */
async function outcome(pool: pg.Pool, statement: string): Promise<string> {
  return pool.query(statement).then(
    () => 'ok',
    (error: { code?: string }) => error.code ?? 'failed',
  );
}

const ENTRY = JSON.stringify({ issuer: 'https://forged.test', jwksUri: 'https://forged.test/jwks.json', products: ['forged'] });

describe('the roles of least privilege in docs/postgres.md', () => {
  it('are granted by exactly the SQL migrate runs, for the default names and the schema public', () => {
    const page = readFileSync(join(root, 'docs', 'postgres.md'), 'utf8');
    const section = page.slice(page.indexOf('### Least privilege'), page.indexOf('## Every wait has a bound'));
    const sql = /```sql\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    const roles = [DEFAULT_ROLES.gateway, DEFAULT_ROLES.operator].map((role) => `CREATE ROLE ${role} NOLOGIN;`);
    const grants = grantStatements(DEFAULT_ROLES, SCHEMA_AREAS, 'public').map((statement) => `${statement};`);
    expect(sql.trim().split('\n')).toEqual([...roles, ...grants]);
  });
});

describe.skipIf(SKIP)('the roles of least privilege on a real PostgreSQL', () => {
  beforeAll(async () => {
    url = (await createTestDatabase('least_privilege')).url;
    admin = openPool(url, { max: 2 });
    roles = { gateway: uniqueRole('gateway'), operator: uniqueRole('operator') };
    report = await migrate(admin, { roles });
    const [gatewayLogin, operatorLogin] = await Promise.all([
      loginRole(admin, 'gateway_app', [roles.gateway]),
      loginRole(admin, 'operator_app', [roles.operator]),
    ]);
    gateway = openPool(urlAs(url, gatewayLogin), { max: 4 });
    operator = openPool(urlAs(url, operatorLogin), { max: 2 });
    acme = await createTestIssuer({ audience: AUDIENCE, issuer: 'https://acme.test', product: 'acme', kid: 'acme-1' });
    await acme.listen();
  });

  afterAll(async () => {
    await Promise.all([admin, gateway, operator].map((pool) => pool?.end()));
    await acme?.close();
  });

  it('creates both roles NOLOGIN; a second migrate finds them and grants again, creating none', async () => {
    expect(report.roles).toEqual({ ...roles, created: [roles.gateway, roles.operator] });
    const { rows } = await admin.query('SELECT rolname, rolcanlogin FROM pg_roles WHERE rolname = ANY($1) ORDER BY rolname', [
      [roles.gateway, roles.operator],
    ]);
    expect(rows.map((row) => row.rolcanlogin)).toEqual([false, false]);
    expect((await migrate(admin, { roles })).roles).toEqual({ ...roles, created: [] });
  });

  it.each([
    ['add an issuer', `INSERT INTO ${TABLES.issuers} (issuer, entry) VALUES ('https://forged.test', '${ENTRY}')`],
    ['change an issuer', `UPDATE ${TABLES.issuers} SET entry = entry`],
    ['remove an issuer', `DELETE FROM ${TABLES.issuers}`],
    ['record a control', `INSERT INTO ${TABLES.controls} (action, issuer) VALUES ('resume_issuer', 'https://acme.test')`],
    ['delete a control', `DELETE FROM ${TABLES.controls}`],
    ['move the compaction mark', `UPDATE ${TABLES.controlsCompacted} SET through = 0`],
    ['write the audit', `INSERT INTO ${TABLES.issuerChanges} (issuer, action, actor) VALUES ('https://forged.test', 'add', 'x')`],
    ['change the audit', `UPDATE ${TABLES.issuerChanges} SET actor = 'x'`],
    ['delete the audit', `DELETE FROM ${TABLES.issuerChanges}`],
    ['truncate the audit', `TRUNCATE ${TABLES.issuerChanges}`],
    ['change the schema', `CREATE TABLE ${TABLES.issuers}_shadow (issuer text)`],
  ])("refuses the gateway's role to %s", async (_what, statement) => {
    expect(await outcome(gateway, statement)).toBe('42501');
  });

  it.each([
    ['write a payment link', `INSERT INTO ${TABLES.links} (id, tenant, link_code, record) VALUES (gen_random_uuid(), 't', 'c', '{}')`],
    ['write the key history', `INSERT INTO ${TABLES.keyHistory} (issuer, kid, first_seen) VALUES ('https://acme.test', 'k', 0)`],
    ['write the audit', `INSERT INTO ${TABLES.issuerChanges} (issuer, action, actor) VALUES ('https://forged.test', 'add', 'x')`],
    ['delete a control', `DELETE FROM ${TABLES.controls}`],
    ['write a heartbeat', `INSERT INTO ${TABLES.instances} (name, started_at, interval_ms) VALUES ('forged', now(), 1000)`],
  ])("refuses the operator's role to %s", async (_what, statement) => {
    expect(await outcome(operator, statement)).toBe('42501');
  });

  it.each([
    ['UPDATE', `UPDATE ${TABLES.issuerChanges} SET actor = 'x'`],
    ['DELETE', `DELETE FROM ${TABLES.issuerChanges}`],
    ['TRUNCATE', `TRUNCATE ${TABLES.issuerChanges}`],
  ])('refuses %s of the audit to everyone: gateway, operator and the owner', async (_what, statement) => {
    expect(await Promise.all([gateway, operator, admin].map((pool) => outcome(pool, statement)))).toEqual(['42501', '42501', '42501']);
  });

  it("lets the operator's role change the registry and record controls, and read the audit and the key history", async () => {
    const change = await addIssuer(operator, acme.entry, { by: 'alice' });
    expect(change.role).toMatch(/^operator_app_/);
    await recordControl(operator, { action: 'refresh_keys', issuer: acme.issuer });
    expect((await readIssuerChanges(operator)).map((logged) => logged.id)).toContain(change.id);
    expect(await readKeyHistory(operator)).toEqual(expect.any(Array));
  });

  it("lets the gateway's role do its whole work: migrate at start, follow the registry and controls, compact, links, key history", async () => {
    expect((await migrate(gateway)).applied).toEqual([]);
    const registry = await postgresRegistry(gateway, { onEvent: () => undefined });
    const controls = await postgresControls(gateway, { onError: (error) => expect.fail(String(error)) });
    const keys = await postgresKeyHistory(gateway, { onError: (error) => expect.fail(String(error)) });
    const heartbeat = await postgresHeartbeat(gateway, {
      name: 'least-1',
      registry,
      controls,
      onError: (error) => expect.fail(String(error)),
    });
    try {
      const verifier = createVerifier({ registry: new IssuerRegistry([], { allowEmpty: true }), audience: AUDIENCE });
      registry.attach(verifier);
      controls.attach(verifier);
      keys.attach(verifier);
      await verifier.verify(await acme.token());
      await recordControl(operator, { action: 'suspend_issuer', issuer: acme.issuer });
      await eventually(
        'the suspension applies',
        async () =>
          verifier.verify(await acme.token()).then(
            () => false,
            (error: { code?: string }) => error.code === 'issuer_suspended',
          ),
        2000,
      );
      expect(await compactControls(gateway)).toMatchObject({ kept: 1 });
      await keys.flush();
      expect((await readKeyHistory(admin)).map((key) => key.kid)).toEqual(['acme-1']);
      const directory = new PostgresDirectory(gateway);
      await directory.seed(SEEDS);
      const create = makeHandler({
        directory,
        store: new PostgresPaymentLinkStore(gateway),
        idempotency: new PostgresIdempotencyStore(gateway),
        ids: randomIds,
      });
      const created = await create(jsonRequest(await callers.auth(), validBody(), { 'idempotency-key': 'least-1' }));
      expect(created.status).toBe(201);
      expect((await new PostgresPaymentLinkStore(admin).list(TENANT_A)).map((link) => link.id)).toContain(
        (created.body as { id: string }).id,
      );
      expect(await new PostgresIdempotencyStore(gateway).purgeExpired(Number.MAX_SAFE_INTEGER)).toBe(1);
      await heartbeat.beat();
      // The operator sees the fleet (fleet, --wait); the heartbeat says what the gateway applied.
      expect((await readFleet(operator)).instances).toEqual([
        expect.objectContaining({ name: 'least-1', live: true, registry: expect.objectContaining({ change: registry.through }) }),
      ]);
    } finally {
      await heartbeat.close();
      await Promise.all([registry.close(), controls.close(), keys.close()]);
    }
  });

  it.each([
    ['a name with a quote', { gateway: 'gw"; DROP TABLE x; --' }, 'roles.gateway'],
    ['a name of the pg_ prefix', { operator: 'pg_monitor' }, 'roles.operator'],
    ['one name for both', { gateway: 'same', operator: 'same' }, 'two roles'],
  ])('refuses %s with a TypeError naming it, before any statement', async (_case, given, named) => {
    await expect(migrate(admin, { roles: given })).rejects.toThrow(
      expect.objectContaining({ name: 'TypeError', message: expect.stringContaining(named) }),
    );
  });

  it.each([
    ['a name', 'paygate_gateway', 'got "paygate_gateway"'],
    ['a number', 42, 'got 42'],
    ['null', null, 'got null'],
  ])('names the shape found when roles is %s, before any statement', async (_case, roles, found) => {
    await expect(migrate(admin, { roles: roles as never })).rejects.toThrow(
      expect.objectContaining({ name: 'TypeError', message: expect.stringContaining(found) }),
    );
  });

  it('names the one name found when both roles share it', async () => {
    await expect(migrate(admin, { roles: { gateway: 'same', operator: 'same' } })).rejects.toThrow('got "same" for both');
  });

  it("names the area behind, both versions and the remedy when the gateway's role finds the schema to upgrade", async () => {
    const older = (await createTestDatabase('least_privilege_older')).url;
    const owner = openPool(older, { max: 1 });
    const behind = { gateway: uniqueRole('gateway'), operator: uniqueRole('operator') };
    await migrate(owner, { only: 'links', roles: behind });
    const login = await loginRole(owner, 'gateway_app', [behind.gateway]);
    const upgraded = openPool(urlAs(older, login), { max: 1 });
    try {
      const refusal = await migrate(upgraded).then(
        () => expect.fail('migrate resolved'),
        (error: Error) => error,
      );
      expect(refusal).toBeInstanceOf(MigrationError);
      expect(refusal).toMatchObject({
        code: 'upgrade_denied',
        role: login,
        area: 'controls',
        found: 0,
        known: SCHEMA_VERSIONS.controls,
        version: 1,
        cause: { code: '42501' },
      });
      expect((await owner.query(`SELECT count(*)::int AS n FROM ${TABLES.migrations} WHERE area = 'controls'`)).rows[0].n).toBe(0);
    } finally {
      await Promise.all([upgraded.end(), owner.end()]);
    }
  });

  it('refuses to set up the roles as a role that does not own the tables, whose GRANTs would grant nothing, naming it', async () => {
    const held = { gateway: uniqueRole('gw'), operator: uniqueRole('op') };
    await admin.query(`CREATE ROLE ${held.gateway} NOLOGIN; CREATE ROLE ${held.operator} NOLOGIN`);
    const refusal = await migrate(gateway, { only: 'registry', roles: held }).then(
      () => expect.fail('migrate resolved'),
      (error: Error) => error,
    );
    expect(refusal).toBeInstanceOf(MigrationError);
    expect(refusal).toMatchObject({
      code: 'not_owner',
      role: expect.stringMatching(/^gateway_app_/),
      tables: [TABLES.issuerChanges, TABLES.issuers, TABLES.migrations],
      owner: 'postgres',
    });
    const { rows } = await admin.query(`SELECT has_table_privilege($1, '${TABLES.issuers}', 'SELECT') AS granted`, [held.gateway]);
    expect(rows[0].granted).toBe(false);
  });

  it('refuses with create_role_denied, naming both roles, when the migrating role may not create a role', async () => {
    const migrator = await loginRole(admin, 'migrator');
    await admin.query(`GRANT SELECT ON ${TABLES.migrations} TO ${migrator}`);
    const limited = openPool(urlAs(url, migrator), { max: 1 });
    try {
      const missing = uniqueRole('gw');
      const refusal = await migrate(limited, { only: 'links', roles: { gateway: missing, operator: uniqueRole('op') } }).catch(
        (error: unknown) => error,
      );
      expect(refusal).toBeInstanceOf(MigrationError);
      expect(refusal).toMatchObject({ code: 'create_role_denied', role: migrator, createRole: missing, cause: { code: '42501' } });
    } finally {
      await limited.end();
    }
  });
});
