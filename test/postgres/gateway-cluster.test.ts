/**
 * Two example gateway processes on one real PostgreSQL (`DATABASE_URL`), as a load balancer would
 * run them: shared links and idempotency keys, operator controls from the built command line,
 * an instance killed mid-creation, and the database stopped for a moment.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TABLES } from '../../src/postgres/schema-names.js';
import { type TestKey, signRawToken } from '../../src/testing/index.js';
import { eventually } from './eventually.js';
import {
  type Answer,
  type Gateway,
  answer,
  info,
  paygateAuth as runPaygateAuth,
  requireBuild,
  root,
  startGateway,
  stopProcess,
} from './gateway-processes.js';
import { type PgServer, freePort, openPool, skipWithoutPostgres, startPostgres } from './pg-server.js';

const SKIP = skipWithoutPostgres('test/postgres/gateway-cluster.test.ts');
const ISSUER = 'https://auth.demo-integration.example';
const AUDIENCE = 'https://payments.example';
const CLINIC_1 = 'ern:demo/tenants/clinic-1';
const CLINIC_2 = 'ern:demo/tenants/clinic-2';
/** The lease of a pending key, short so that a dead instance's keys free up quickly. */
const LEASE_MS = 1000;
const run = randomUUID().slice(0, 8);

let server: PgServer;
let databaseUrl: string;
let stateDir: string;
let a: Gateway;
let b: Gateway;
let sql: pg.Pool;
let key: TestKey;
const children: ChildProcess[] = [];

function startInstance(): Promise<Gateway> {
  return startGateway(
    {
      DATABASE_URL: databaseUrl,
      PAYGATE_EXAMPLE_STATE_DIR: stateDir,
      PAYGATE_IDEMPOTENCY_LEASE_MS: String(LEASE_MS),
      PAYGATE_CONTROLS_POLL_MS: '5000',
    },
    children,
  );
}

function readDemoKey(): TestKey {
  const saved = JSON.parse(readFileSync(join(stateDir, 'demo-key.json'), 'utf8')) as {
    kid: string;
    modulusLength: number;
    publicJwk: TestKey['publicJwk'];
    privateKeyPkcs8: string;
  };
  return {
    kid: saved.kid,
    modulusLength: saved.modulusLength,
    publicJwk: saved.publicJwk,
    privateKeyPkcs8: new Uint8Array(Buffer.from(saved.privateKeyPkcs8, 'base64')),
  };
}

function token(tenant = CLINIC_1, jti = randomUUID()): Promise<string> {
  const iat = Math.floor(Date.now() / 1000);
  const claims = {
    iss: ISSUER,
    sub: ISSUER,
    aud: AUDIENCE,
    iat,
    expt: iat + 3600,
    tenant_ern: tenant,
    scope: 'pay:processPayments',
    user_ern: '//users/ops',
    jti,
  };
  return signRawToken(key, { alg: 'RS256', typ: 'JWT', kid: key.kid }, claims);
}

function linkBody(meta: Record<string, string>): Record<string, unknown> {
  return {
    amount: '125.5',
    currency: 'EUR',
    department: '//departments/cardiology',
    shopper: '//customers/c-1001',
    email: 'jane@example.com',
    description: 'Cardiology consultation',
    meta: { run, ...meta },
  };
}

async function post(instance: Gateway, bearer: string, body: unknown, idempotencyKey?: string): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' };
  if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
  return answer(await fetch(`${instance.url}/payment-links/`, { method: 'POST', headers, body: JSON.stringify(body) }));
}

async function getLink(instance: Gateway, bearer: string, id: string): Promise<Answer> {
  return answer(await fetch(`${instance.url}/payment-links/${id}`, { headers: { authorization: `Bearer ${bearer}` } }));
}

/** Runs the built command line, as `npx paygate-auth …` does; its output, once it exits 0. */
async function paygateAuth(...args: string[]): Promise<string> {
  const ran = await runPaygateAuth(databaseUrl, args);
  if (ran.code !== 0) throw new Error(`paygate-auth ${args.join(' ')} exited ${ran.code}: ${ran.stderr}`);
  return ran.stdout;
}

async function linksOfRun(prefix: string): Promise<number> {
  const { rows } = await sql.query(
    `SELECT count(*)::int AS n FROM ${TABLES.links} WHERE record->'meta'->>'run' = $1 AND record->'meta'->>'step' = $2`,
    [run, prefix],
  );
  return rows[0].n as number;
}

/** Verifies `bearer` on `instance` until its result is cached (the second use caches it). */
async function cacheOn(instance: Gateway, bearer: string): Promise<void> {
  for (let round = 0; round < 3; round++) expect((await info(instance, bearer)).status).toBe(200);
}

describe.skipIf(SKIP)('two example gateways on one PostgreSQL', () => {
  beforeAll(async () => {
    requireBuild();
    stateDir = mkdtempSync(join(tmpdir(), 'paygate-cluster-'));
    server = await startPostgres();
    databaseUrl = await server.createDatabase('gateway');
    sql = openPool(databaseUrl, { max: 4 });
    a = await startInstance();
    b = await startInstance();
    key = readDemoKey();
  }, 60_000);

  afterAll(async () => {
    await Promise.all(children.map((child) => stopProcess(child)));
    await sql?.end();
    await server?.dispose();
    if (stateDir !== undefined) rmSync(stateDir, { recursive: true, force: true });
  });

  it('creates exactly one link per key when each of 100 keys is sent to both instances at once, and answers alike', async () => {
    const bearer = await token();
    const pairs = await Promise.all(
      Array.from({ length: 100 }, async (_, index) => {
        const body = linkBody({ step: 'concurrent', order: String(index) });
        const idempotencyKey = `concurrent-${run}-${index}`;
        return Promise.all([post(a, bearer, body, idempotencyKey), post(b, bearer, body, idempotencyKey)]);
      }),
    );
    for (const [fromA, fromB] of pairs) {
      expect([fromA.status, fromB.status]).toEqual([201, 201]);
      expect(fromB.body).toEqual(fromA.body);
    }
    expect(new Set(pairs.map(([fromA]) => fromA.body.id)).size).toBe(100);
    expect(await linksOfRun('concurrent')).toBe(100);
  });

  it('says in its banner that it keeps its stores in PostgreSQL, naming the host without the password', () => {
    expect(a.output).toMatch(/\n {2}store {6}PostgreSQL postgres:\/\/127\.0\.0\.1:\d+\/gateway \(/);
  });

  it('gives a new customer one shopper UUID on both instances', async () => {
    const bearer = await token();
    const body = { ...linkBody({ step: 'shopper' }), shopper: `//customers/new-${run}` };
    const [fromA, fromB] = await Promise.all([post(a, bearer, body, `shopper-a-${run}`), post(b, bearer, body, `shopper-b-${run}`)]);
    expect([fromA.status, fromB.status]).toEqual([201, 201]);
    expect(fromA.body.shopper).toBe(fromB.body.shopper);
    expect(fromA.body.department).toBe(fromB.body.department);
  });

  it('exits 1 with one line naming the host, never the password, when the database cannot be reached at start', async () => {
    const port = await freePort();
    const env = {
      ...process.env,
      PORT: '0',
      DATABASE_URL: `postgres://gateway:s3cret@127.0.0.1:${port}/payments`,
      PAYGATE_EXAMPLE_STATE_DIR: stateDir,
    };
    const started = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(process.execPath, ['examples/gateway/server.mjs'], { cwd: root, env, timeout: 20_000 }, (error, _stdout, stderr) =>
        resolve({ code: error === null ? 0 : ((error as { code?: number }).code ?? null), stderr }),
      );
    });
    expect(started.code).toBe(1);
    expect(started.stderr.trim().split('\n')).toEqual([
      expect.stringContaining(`cannot reach the database at postgres://127.0.0.1:${port}/payments`),
    ]);
    expect(started.stderr).not.toContain('s3cret');
  });

  it('refuses a key reused with another body, 409 idempotency_key_reused, from either instance', async () => {
    const bearer = await token();
    const idempotencyKey = `reused-${run}`;
    expect((await post(a, bearer, linkBody({ step: 'reused' }), idempotencyKey)).status).toBe(201);
    const other = linkBody({ step: 'reused', changed: 'yes' });
    const [fromA, fromB] = await Promise.all([post(a, bearer, other, idempotencyKey), post(b, bearer, other, idempotencyKey)]);
    expect([fromA.status, fromA.body.code, fromB.status, fromB.body.code]).toEqual([
      409,
      'idempotency_key_reused',
      409,
      'idempotency_key_reused',
    ]);
    expect(await linksOfRun('reused')).toBe(1);
  });

  it('reads a link created on A from B, and never shows it to another tenant', async () => {
    const created = await post(a, await token(), linkBody({ step: 'read' }), `read-${run}`);
    const id = String(created.body.id);
    const onB = await getLink(b, await token(), id);
    expect([onB.status, onB.body]).toEqual([200, created.body]);
    const otherTenant = await getLink(b, await token(CLINIC_2), id);
    expect([otherTenant.status, otherTenant.body.code]).toEqual([404, 'payment_link_not_found']);
  });

  it('suspend-issuer makes both instances refuse the issuer within a second, cached tokens included; resume-issuer restores it', async () => {
    const bearer = await token();
    await Promise.all([cacheOn(a, bearer), cacheOn(b, bearer)]);
    expect(await paygateAuth('suspend-issuer', '--issuer', ISSUER)).toMatch(/^Suspended /);
    await eventually('both refuse with issuer_suspended', async () => {
      const answers = await Promise.all([info(a, bearer), info(b, bearer)]);
      return answers.every((got) => got.status === 401 && got.body.code === 'issuer_suspended');
    });
    await paygateAuth('resume-issuer', '--issuer', ISSUER);
    await eventually('both accept again', async () =>
      (await Promise.all([info(a, bearer), info(b, bearer)])).every((got) => got.status === 200),
    );
  });

  it('answers 503 with Retry-After while the database is stopped, keeps verifying, and loses nothing', async () => {
    const bearer = await token();
    const before = await post(a, bearer, linkBody({ step: 'outage' }), `outage-before-${run}`);
    expect(before.status).toBe(201);
    await server.stop();
    try {
      const answers = await Promise.all([
        post(a, bearer, linkBody({ step: 'outage' }), `outage-during-${run}`),
        post(b, bearer, linkBody({ step: 'outage' }), `outage-during-${run}`),
        post(b, bearer, linkBody({ step: 'outage' })),
        getLink(b, bearer, String(before.body.id)),
      ]);
      for (const got of answers) {
        expect([got.status, got.body.code]).toEqual([503, 'storage_unavailable']);
        expect(Number(got.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
      expect((await Promise.all([info(a, bearer), info(b, bearer)])).map((got) => got.status)).toEqual([200, 200]);
    } finally {
      await server.start();
    }
    await eventually(
      'the retry is created',
      async () => (await post(b, bearer, linkBody({ step: 'outage' }), `outage-during-${run}`)).status === 201,
      10_000,
    );
    const replayed = await post(a, bearer, linkBody({ step: 'outage' }), `outage-during-${run}`);
    expect([replayed.status, replayed.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
    expect((await getLink(b, bearer, String(before.body.id))).body).toEqual(before.body);
    expect(await linksOfRun('outage')).toBe(2);
  });

  it('leaves no half-written link when an instance is killed mid-creation; each key then succeeds on the other after the lease', async () => {
    const bearer = await token();
    // Each creation held mid-way keeps one of A's 10 pooled connections (one more listens).
    const count = 8;
    const keys = Array.from({ length: count }, (_, index) => `killed-${run}-${index}`);
    const body = (index: number) => linkBody({ step: 'killed', order: String(index) });
    // Holding the links table makes A's creations stop after their claim, mid-creation.
    const holder = new pg.Client({ connectionString: databaseUrl });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query(`LOCK TABLE ${TABLES.links} IN EXCLUSIVE MODE`);
    const inFlight = keys.map((idempotencyKey, index) => post(a, bearer, body(index), idempotencyKey).catch(() => null));
    await eventually(
      'every key is claimed by A',
      async () => {
        const { rows } = await sql.query(`SELECT count(*)::int AS n FROM ${TABLES.idempotency} WHERE key LIKE $1 AND state = 'pending'`, [
          `killed-${run}-%`,
        ]);
        return rows[0].n === count;
      },
      10_000,
    );
    await stopProcess(a.child, 'SIGKILL');
    await holder.query('ROLLBACK');
    await holder.end();
    await Promise.all(inFlight);
    const retries = await Promise.all(keys.map((idempotencyKey, index) => post(b, bearer, body(index), idempotencyKey)));
    expect(retries.map((got) => got.status)).toEqual(keys.map(() => 201));
    expect(new Set(retries.map((got) => got.body.id)).size).toBe(count);
    expect(await linksOfRun('killed')).toBe(count);
    const { rows } = await sql.query(
      `SELECT count(*)::int AS n FROM ${TABLES.links} l JOIN ${TABLES.idempotency} i
         ON i.tenant = l.tenant AND i.state = 'completed' AND i.response->'body'->>'id' = l.id::text
       WHERE l.record->'meta'->>'run' = $1 AND l.record->'meta'->>'step' = 'killed'`,
      [run],
    );
    expect(rows[0].n).toBe(count);
  });

  it('revoke-key makes every instance refuse the key within a second, cached tokens included, and a later instance too', async () => {
    a = await startInstance();
    const bearer = await token();
    await Promise.all([cacheOn(a, bearer), cacheOn(b, bearer)]);
    expect(await paygateAuth('revoke-key', '--issuer', ISSUER, '--kid', key.kid)).toMatch(/^Revoked key /);
    await eventually('both refuse with key_revoked', async () => {
      const answers = await Promise.all([info(a, bearer), info(b, bearer)]);
      return answers.every((got) => got.status === 401 && got.body.code === 'key_revoked');
    });
    const later = await startInstance();
    const refused = await info(later, await token());
    expect([refused.status, refused.body.code]).toEqual([401, 'key_revoked']);
  });
});
