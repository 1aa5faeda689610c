/**
 * Operator controls shared through PostgreSQL: two instances (each its own pool, its own
 * verifier) apply what either records, through notifications, after a dropped LISTEN connection,
 * and by polling. The verifiers' own behaviour (cached results, in-flight verifications) is theirs.
 */
import type { PGlite } from '@electric-sql/pglite';
import { createTestPglite } from './pglite.js';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type Verifier, createVerifier } from '../../src/index.js';
import {
  ClosedError,
  type ControlRowIgnoredEvent,
  type PostgresControls,
  type PostgresControlsOptions,
  migrate,
  postgresControls,
  postgresListener,
} from '../../src/postgres/index.js';
import { TABLES } from '../../src/postgres/schema-names.js';
import { compactControls, recordControl } from '../../src/postgres/internal.js';
import { type TestIssuer, createTestIssuer } from '../../src/testing/index.js';
import { authRejection } from '../support/jwks-rejection.js';
import { verifyUntilCached } from '../support/result-cache.js';
import { eventually } from './eventually.js';
import { clearControls } from './roles.js';
import { type TestDatabase, createTestDatabase, openPool, skipWithoutPostgres } from './pg-server.js';
import { verifierFixture } from '../support/verifier-fixture.js';

const SKIP = skipWithoutPostgres('test/postgres/operator-controls.test.ts');
const AUDIENCE = 'https://payments.test';
/** Long enough that only a notification or a reconnection can bring a change during a test. */
const NO_POLL = 600_000;

let db: TestDatabase;
let acme: TestIssuer;
let operator: pg.Pool;
const opened: { end(): Promise<void> }[] = [];
let running: PostgresControls[] = [];

const { verifier } = verifierFixture(() => ({ registry: [acme.entry], audience: AUDIENCE }));

/** One gateway instance: its own pool, controls and verifier. */
async function instance(options: PostgresControlsOptions = {}): Promise<{ verifier: Verifier; controls: PostgresControls; pool: pg.Pool }> {
  const pool = openPool(db.url, { max: 4 });
  opened.push(pool);
  const controls = await postgresControls(pool, { pollInterval: NO_POLL, onError: () => undefined, ...options });
  running.push(controls);
  const v = verifier();
  controls.attach(v);
  return { verifier: v, controls, pool };
}

async function rejectsWith(v: Verifier, token: string, code: string): Promise<boolean> {
  try {
    await v.verify(token);
    return false;
  } catch (error) {
    return (error as { code?: string }).code === code;
  }
}

async function accepts(v: Verifier, token: string): Promise<boolean> {
  return v.verify(token).then(
    () => true,
    () => false,
  );
}

describe.skipIf(SKIP)('postgresControls on a real PostgreSQL', () => {
  beforeAll(async () => {
    acme = await createTestIssuer({ audience: AUDIENCE, issuer: 'https://acme.test', product: 'acme', kid: 'acme-1' });
    await acme.listen();
    db = await createTestDatabase('operator_controls');
    operator = openPool(db.url, { max: 2 });
    opened.push(operator);
    await migrate(operator);
  });

  afterAll(async () => {
    await Promise.all(opened.map((pool) => pool.end().catch(() => undefined)));
    await acme?.close();
  });

  beforeEach(() => clearControls(operator));
  afterEach(async () => {
    await Promise.all(running.map((controls) => controls.close()));
    running = [];
  });

  it('makes both instances reject a revoked key, cached results included, on its notification', async () => {
    const [a, b] = await Promise.all([instance(), instance()]);
    const token = await acme.token();
    await Promise.all([verifyUntilCached(a.verifier, token), verifyUntilCached(b.verifier, token)]);
    await a.controls.revokeKey(acme.issuer, 'acme-1');
    await eventually(
      'both reject key_revoked',
      async () => (await rejectsWith(a.verifier, token, 'key_revoked')) && (await rejectsWith(b.verifier, token, 'key_revoked')),
    );
    expect((await authRejection(b.verifier.verify(token))).status).toBe(401);
  });

  it('suspends an issuer on every instance and resumes it', async () => {
    const [a, b] = await Promise.all([instance(), instance()]);
    const token = await acme.token();
    await recordControl(operator, { action: 'suspend_issuer', issuer: acme.issuer });
    await eventually(
      'both reject issuer_suspended',
      async () => (await rejectsWith(a.verifier, token, 'issuer_suspended')) && (await rejectsWith(b.verifier, token, 'issuer_suspended')),
    );
    await recordControl(operator, { action: 'resume_issuer', issuer: acme.issuer });
    await eventually('both accept again', async () => (await accepts(a.verifier, token)) && (await accepts(b.verifier, token)));
  });

  it('reloads the keys of an issuer on every instance when asked', async () => {
    const [a, b] = await Promise.all([instance(), instance()]);
    await Promise.all([a.verifier.verify(await acme.token()), b.verifier.verify(await acme.token())]);
    const before = acme.jwksRequests;
    await recordControl(operator, { action: 'refresh_keys', issuer: acme.issuer });
    await eventually('two more JWKS downloads', () => acme.jwksRequests >= before + 2);
  });

  it('applies the recorded state to an instance that starts later, and to a verifier attached later', async () => {
    await recordControl(operator, { action: 'suspend_issuer', issuer: acme.issuer });
    const late = await instance();
    const token = await acme.token();
    expect(await rejectsWith(late.verifier, token, 'issuer_suspended')).toBe(true);
    const another = verifier();
    late.controls.attach(another);
    expect(await rejectsWith(another, token, 'issuer_suspended')).toBe(true);
  });

  it('leaves out actions on issuers a verifier does not register', async () => {
    const a = await instance();
    await recordControl(operator, { action: 'suspend_issuer', issuer: 'https://other.test' });
    await a.controls.reload();
    expect(await accepts(a.verifier, await acme.token())).toBe(true);
    expect(a.controls.state().suspended).toEqual(['https://other.test']);
  });

  it('reports once a control written by hand for a near miss of a registered issuer, which it leaves out', async () => {
    const events: ControlRowIgnoredEvent[] = [];
    const a = await instance({ onEvent: (event) => events.push(event) });
    await operator.query(`INSERT INTO ${TABLES.controls} (action, issuer) VALUES ('suspend_issuer', 'https://ACME.test/')`);
    await operator.query(`INSERT INTO ${TABLES.controls} (action, issuer) VALUES ('suspend_issuer', 'https://other.test')`);
    await a.controls.reload();
    await a.controls.reload();
    expect(await accepts(a.verifier, await acme.token())).toBe(true);
    expect(events).toEqual([
      {
        type: 'control_row_ignored',
        action: 'suspend_issuer',
        issuer: 'https://ACME.test/',
        kid: null,
        rule: 'near_miss_issuer',
        reason: expect.stringContaining(`nearly names registered issuer "${acme.issuer}"`),
      },
    ]);
  });

  it('applies the revocations and suspension of an issuer registered later, at the next read', async () => {
    const a = await instance();
    const other = { ...acme.entry, issuer: 'https://other.test' };
    a.verifier.setRegistry([other]);
    await a.controls.revokeKey(acme.issuer, 'acme-1');
    await a.controls.suspendIssuer(other.issuer);
    a.verifier.setRegistry([acme.entry, other]);
    await a.controls.reload();
    expect(await rejectsWith(a.verifier, await acme.token(), 'key_revoked')).toBe(true);
    expect(await rejectsWith(a.verifier, await acme.token({ iss: other.issuer, sub: other.issuer }), 'issuer_suspended')).toBe(true);
  });

  it('re-reads the table when its dropped LISTEN connection comes back, catching what it missed', async () => {
    let open: () => void = () => undefined;
    let gate = Promise.resolve();
    const listen = async () => {
      await gate;
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      return client;
    };
    const a = await instance({ listen, reconnectDelay: 10 });
    expect(a.controls.listening).toBe(true);
    gate = new Promise((resolve) => {
      open = resolve;
    });
    await operator.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN paygate_operator_controls' AND datname = current_database()`,
    );
    await eventually('the drop is seen', () => !a.controls.listening);
    await recordControl(operator, { action: 'suspend_issuer', issuer: acme.issuer });
    const token = await acme.token();
    expect(await accepts(a.verifier, token)).toBe(true);
    open();
    await eventually('applied after reconnecting', () => rejectsWith(a.verifier, token, 'issuer_suspended'));
    expect(a.controls.listening).toBe(true);
  });

  it('listens on the connections its listen function opens', async () => {
    const listeningPool = openPool(db.url, { max: 1 });
    opened.push(listeningPool);
    const a = await instance({ listen: () => listeningPool.connect() });
    expect(a.controls.listening).toBe(true);
    expect(listeningPool.totalCount).toBe(1);
    await recordControl(operator, { action: 'suspend_issuer', issuer: acme.issuer });
    await eventually('applied on its notification', async () => rejectsWith(a.verifier, await acme.token(), 'issuer_suspended'));
  });

  it('reads only the actions after the last one it applied', async () => {
    const statements: unknown[][] = [];
    const counting = {
      query: (text: string, params?: unknown[]) => {
        statements.push(params ?? []);
        return operator.query(text, params);
      },
    };
    const a = await postgresControls(counting, { listen: false, pollInterval: NO_POLL, onError: () => undefined });
    running.push(a);
    const first = await recordControl(operator, { action: 'revoke_key', issuer: acme.issuer, kid: 'acme-0' });
    await a.reload();
    const second = await recordControl(operator, { action: 'suspend_issuer', issuer: acme.issuer });
    statements.length = 0;
    await a.reload();
    expect(statements[0]?.[0]).toBe(first.id);
    expect(a.state()).toEqual({
      revoked: [{ issuer: acme.issuer, kid: 'acme-0' }],
      suspended: [acme.issuer],
      through: second.id,
    });
  });

  it('gives two controls recorded one after the other consecutive ids: one id drawn per row', async () => {
    const first = await recordControl(operator, { action: 'suspend_issuer', issuer: acme.issuer });
    const second = await recordControl(operator, { action: 'resume_issuer', issuer: acme.issuer });
    const hand = await operator.query(`INSERT INTO ${TABLES.controls} (action, issuer) VALUES ('refresh_keys', $1) RETURNING id`, [
      acme.issuer,
    ]);
    expect([second.id - first.id, Number(hand.rows[0].id) - second.id]).toEqual([1, 1]);
  });

  it.each([
    ['an empty issuer', "('suspend_issuer', '', NULL)"],
    ['an issuer of 2049 characters', "('suspend_issuer', repeat('i', 2049), NULL)"],
    ['an issuer holding a space', "('suspend_issuer', 'https://acme.test ', NULL)"],
    ['an empty kid', "('revoke_key', 'https://acme.test', '')"],
    ['a kid of 2049 characters', "('revoke_key', 'https://acme.test', repeat('k', 2049))"],
    ['a kid holding a line break', "('revoke_key', 'https://acme.test', E'acme-1\\n')"],
  ])('refuses a control inserted by hand with %s, as recordControl does (constraint paygate_operator_controls_text)', async (_, row) => {
    await expect(operator.query(`INSERT INTO ${TABLES.controls} (action, issuer, kid) VALUES ${row}`)).rejects.toMatchObject({
      code: '23514',
      constraint: 'paygate_operator_controls_text',
    });
  });

  it.each([
    ['moving its id past the others', 'id = id + 1000000'],
    ['changing the key it revokes', `kid = 'acme-other'`],
  ])('refuses an UPDATE by hand %s (SQLSTATE 42501), and a running instance still applies the next action', async (_, change) => {
    const a = await instance({ listen: false });
    await recordControl(operator, { action: 'revoke_key', issuer: acme.issuer, kid: 'acme-1' });
    await expect(operator.query(`UPDATE ${TABLES.controls} SET ${change}`)).rejects.toMatchObject({ code: '42501' });
    await recordControl(operator, { action: 'revoke_key', issuer: acme.issuer, kid: 'acme-2' });
    await a.controls.reload();
    expect(a.controls.state().revoked).toEqual([
      { issuer: acme.issuer, kid: 'acme-1' },
      { issuer: acme.issuer, kid: 'acme-2' },
    ]);
  });

  it('applies an action an operator inserted by hand even when a later action commits first: ids commit in their order', async () => {
    const a = await instance({ listen: false });
    const hand = await operator.connect();
    try {
      // An operator's psql session: the row is in, its id drawn, the transaction still open.
      await hand.query('BEGIN');
      await hand.query(`INSERT INTO ${TABLES.controls} (action, issuer, kid) VALUES ('revoke_key', $1, 'acme-by-hand')`, [acme.issuer]);
      const later = recordControl(operator, { action: 'revoke_key', issuer: acme.issuer, kid: 'acme-later' });
      let settled = false;
      void later.then(
        () => (settled = true),
        () => (settled = true),
      );
      await eventually('the later action committed, or queued behind the hand-written one', async () => {
        if (settled) return true;
        const { rows } = await a.pool.query(
          `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`,
        );
        return rows.length > 0;
      });
      await a.controls.reload();
      await hand.query('COMMIT');
      await later;
    } finally {
      hand.release();
    }
    await a.controls.reload();
    expect(a.controls.state().revoked).toEqual(
      expect.arrayContaining([
        { issuer: acme.issuer, kid: 'acme-by-hand' },
        { issuer: acme.issuer, kid: 'acme-later' },
      ]),
    );
  });
  it('compacts the table to one row per active control', async () => {
    const a = await instance();
    for (let index = 0; index < 5; index++) await recordControl(operator, { action: 'revoke_key', issuer: acme.issuer, kid: 'acme-old' });
    await recordControl(operator, { action: 'suspend_issuer', issuer: 'https://other.test' });
    await recordControl(operator, { action: 'suspend_issuer', issuer: acme.issuer });
    await recordControl(operator, { action: 'refresh_keys', issuer: acme.issuer });
    await recordControl(operator, { action: 'resume_issuer', issuer: acme.issuer });
    expect(await a.controls.compact()).toEqual({ deleted: 7, kept: 2 });
    const { rows } = await operator.query(`SELECT action, issuer, kid FROM ${TABLES.controls} ORDER BY id`);
    expect(rows).toEqual([
      { action: 'revoke_key', issuer: acme.issuer, kid: 'acme-old' },
      { action: 'suspend_issuer', issuer: 'https://other.test', kid: null },
    ]);
  });

  it('brings an instance that had not read up to a compaction to the compacted state, a resumption folded away included', async () => {
    const behind = await instance({ listen: false });
    const token = await acme.token();
    await recordControl(operator, { action: 'suspend_issuer', issuer: acme.issuer });
    await behind.controls.reload();
    expect(await rejectsWith(behind.verifier, token, 'issuer_suspended')).toBe(true);
    await recordControl(operator, { action: 'revoke_key', issuer: acme.issuer, kid: 'acme-old' });
    await recordControl(operator, { action: 'resume_issuer', issuer: acme.issuer });
    await compactControls(operator);
    expect((await operator.query(`SELECT action FROM ${TABLES.controls}`)).rows).toEqual([{ action: 'revoke_key' }]);
    await behind.controls.reload();
    expect(await accepts(behind.verifier, token)).toBe(true);
    expect(behind.controls.state().revoked).toEqual([{ issuer: acme.issuer, kid: 'acme-old' }]);
  });

  it.each([
    ['an UPDATE moving the compaction mark back to 0', `UPDATE ${TABLES.controlsCompacted} SET through = 0`],
    ['a DELETE of the compaction mark', `DELETE FROM ${TABLES.controlsCompacted}`],
  ])('still brings an instance behind a compaction to its state after %s by hand', async (_, statement) => {
    const behind = await instance({ listen: false });
    const token = await acme.token();
    await recordControl(operator, { action: 'suspend_issuer', issuer: acme.issuer });
    await behind.controls.reload();
    await recordControl(operator, { action: 'revoke_key', issuer: acme.issuer, kid: 'acme-old' });
    await recordControl(operator, { action: 'resume_issuer', issuer: acme.issuer });
    await compactControls(operator);
    const refused = await operator.query(statement).then(
      () => undefined,
      (error: { code?: string }) => error.code,
    );
    await behind.controls.reload();
    expect(await accepts(behind.verifier, token)).toBe(true);
    expect(refused).toBe(statement.startsWith('DELETE') ? '42501' : undefined);
  });

  it.each([
    ['a revocation', `DELETE FROM ${TABLES.controls} WHERE action = 'revoke_key'`, 'revocation of kid'],
    ['the last suspension', `DELETE FROM ${TABLES.controls} WHERE action = 'suspend_issuer'`, 'lift the suspension of issuer'],
    ['every row', `DELETE FROM ${TABLES.controls}`, 'revocation of kid'],
    ['every row, by TRUNCATE', `TRUNCATE ${TABLES.controls}`, 'TRUNCATE is refused'],
  ])(
    'refuses a DELETE by hand of %s, to its owner too: a running instance and one started after hold the same controls',
    async (_, statement, reason) => {
      const running = await instance({ listen: false });
      await recordControl(operator, { action: 'revoke_key', issuer: acme.issuer, kid: 'acme-1' });
      await recordControl(operator, { action: 'suspend_issuer', issuer: acme.issuer });
      await running.controls.reload();
      await expect(operator.query(statement)).rejects.toMatchObject({ code: '42501', message: expect.stringContaining(reason) });
      const later = await instance({ listen: false });
      await running.controls.reload();
      expect(later.controls.state()).toEqual(running.controls.state());
      expect(later.controls.state()).toMatchObject({ revoked: [{ issuer: acme.issuer, kid: 'acme-1' }], suspended: [acme.issuer] });
    },
  );

  it('refuses a DELETE by hand of the last resumption, which would suspend the issuer again on instances started after', async () => {
    await recordControl(operator, { action: 'suspend_issuer', issuer: acme.issuer });
    await recordControl(operator, { action: 'resume_issuer', issuer: acme.issuer });
    await expect(operator.query(`DELETE FROM ${TABLES.controls} WHERE action = 'resume_issuer'`)).rejects.toMatchObject({
      code: '42501',
      message: expect.stringContaining('suspend again issuer'),
    });
    expect((await instance({ listen: false })).controls.state().suspended).toEqual([]);
  });

  it('lets a DELETE by hand through that leaves the controls in force as they were, moving the compaction mark past it', async () => {
    const behind = await instance({ listen: false });
    const token = await acme.token();
    await recordControl(operator, { action: 'suspend_issuer', issuer: acme.issuer });
    await behind.controls.reload();
    await recordControl(operator, { action: 'revoke_key', issuer: acme.issuer, kid: 'acme-old' });
    await recordControl(operator, { action: 'revoke_key', issuer: acme.issuer, kid: 'acme-old' });
    const resumed = await recordControl(operator, { action: 'resume_issuer', issuer: acme.issuer });
    // The suspension, superseded by the resumption, and the repeated revocation.
    const { rowCount } = await operator.query(
      `DELETE FROM ${TABLES.controls} WHERE action = 'suspend_issuer' OR id = (SELECT max(id) FROM ${TABLES.controls} WHERE action = 'revoke_key')`,
    );
    expect(rowCount).toBe(2);
    const { rows } = await operator.query(`SELECT through FROM ${TABLES.controlsCompacted}`);
    expect(Number(rows[0].through)).toBe(resumed.id - 1);
    await behind.controls.reload();
    expect(await accepts(behind.verifier, token)).toBe(true);
    expect(behind.controls.state()).toEqual((await instance({ listen: false })).controls.state());
  });

  it.each([
    ['kept in the table', false],
    ['compacted away', true],
  ])('gives an action recorded after the id sequence was moved back (setval) an id past every one applied, %s', async (_, compact) => {
    const running = await instance({ listen: false });
    const token = await acme.token();
    await recordControl(operator, { action: 'suspend_issuer', issuer: acme.issuer });
    const resumed = await recordControl(operator, { action: 'resume_issuer', issuer: acme.issuer });
    await running.controls.reload();
    expect(running.controls.state().through).toBe(resumed.id);
    if (compact) await compactControls(operator);
    await operator.query(`SELECT setval('${TABLES.controls}_ids', 1)`);
    const suspended = await recordControl(operator, { action: 'suspend_issuer', issuer: acme.issuer });
    expect(suspended.id).toBe(resumed.id + 1);
    await running.controls.reload();
    expect(await rejectsWith(running.verifier, token, 'issuer_suspended')).toBe(true);
  });

  it('keeps a compaction mark an UPDATE by hand moves past every id drawn at the newest id drawn', async () => {
    await recordControl(operator, { action: 'suspend_issuer', issuer: acme.issuer });
    const newest = await recordControl(operator, { action: 'resume_issuer', issuer: acme.issuer });
    await compactControls(operator);
    await operator.query(`UPDATE ${TABLES.controlsCompacted} SET through = 9000000000000000`);
    const { rows } = await operator.query(`SELECT through FROM ${TABLES.controlsCompacted}`);
    expect(Number(rows[0].through)).toBe(newest.id);
  });

  it('starts on a compacted table that keeps more controls than one read takes (1000)', async () => {
    // 1001 revocations: compaction keeps them all, and its mark is the last one's id.
    await operator.query(
      `INSERT INTO ${TABLES.controls} (action, issuer, kid) SELECT 'revoke_key', $1, 'acme-' || n FROM generate_series(1, 1001) n`,
      [acme.issuer],
    );
    expect(await compactControls(operator)).toMatchObject({ deleted: 0, kept: 1001 });
    let resolved = false;
    const starting = instance({ listen: false }).finally(() => {
      resolved = true;
    });
    await eventually('postgresControls() resolved', () => resolved);
    const { controls } = await starting;
    expect(controls.state().revoked).toHaveLength(1001);
  });

  it('polls at its interval when it does not listen', async () => {
    const a = await instance({ listen: false, pollInterval: 100 });
    expect(a.controls.listening).toBe(false);
    await recordControl(operator, { action: 'suspend_issuer', issuer: acme.issuer });
    await eventually('applied by polling', async () => rejectsWith(a.verifier, await acme.token(), 'issuer_suspended'));
  });

  it('keeps verifying while the database is gone: nothing on the verify path needs it', async () => {
    const a = await instance();
    const token = await acme.token();
    await a.verifier.verify(token);
    await a.controls.close();
    await a.pool.end();
    expect(await accepts(a.verifier, await acme.token({ jti: 'after' }))).toBe(true);
  });

  it.each([
    ['pollInterval', { pollInterval: 50 }],
    ['reconnectDelay', { reconnectDelay: 1.5 }],
    ['listen', { listen: 'yes' }],
    ['listen', { listen: { connect: () => undefined, idleCount: 0, query: () => undefined } }],
    ['statementTimeout', { statementTimeout: 0 }],
    ['heartbeatInterval', { heartbeatInterval: 10 }],
    ['compactInterval', { compactInterval: 5 }],
    ['onRecovered', { onRecovered: true }],
    ['onError', { onError: 'console' }],
  ])('refuses a bad %s with a TypeError naming it', async (name, options) => {
    await expect(postgresControls(operator, options as PostgresControlsOptions)).rejects.toThrow(new RegExp(`${name}`));
  });

  it.each([
    ['text', { listen: 'yes' }, 'got "yes"'],
    ['a number', { listen: 42 }, 'got 42'],
    ['an object that is not a listener', { listen: { connect: () => undefined } }, 'got object'],
  ])('names the listen found when it is %s', async (_case, options, found) => {
    await expect(postgresControls(operator, options as never)).rejects.toThrow(found);
  });

  it('names the heartbeatInterval found when it is given besides a shared listener', async () => {
    const listener = postgresListener(operator);
    try {
      await expect(postgresControls(operator, { listen: listener, heartbeatInterval: 1000 })).rejects.toThrow('got 1000');
    } finally {
      await listener.close();
    }
  });

  it('refuses reload() and attach() after close() with a ClosedError naming the controls', async () => {
    const { controls } = await instance();
    await controls.close();
    const refused = await controls.reload().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ClosedError);
    expect(refused).toMatchObject({ code: 'closed', owner: 'postgresControls' });
    expect(() => controls.attach(verifier())).toThrow(ClosedError);
  });

  it('refuses to attach something that is not a verifier', async () => {
    const a = await instance();
    expect(() => a.controls.attach({} as never)).toThrow(TypeError);
  });

  it.each([
    ['an unknown action', { action: 'delete_everything', issuer: 'https://acme.test' }, /action/],
    ['revoke_key without kid', { action: 'revoke_key', issuer: 'https://acme.test' }, /kid/],
    ['an issuer with spaces', { action: 'suspend_issuer', issuer: 'https://acme .test' }, /issuer/],
    ['a kid with suspend_issuer', { action: 'suspend_issuer', issuer: 'https://acme.test', kid: 'k' }, /kid/],
  ])('refuses to record %s', async (_case, request, message) => {
    await expect(recordControl(operator, request as never)).rejects.toThrow(message);
  });

  it.each([
    ['an unknown action', { action: 'delete_everything', issuer: 'https://acme.test' }, 'got "delete_everything"'],
    ['an action that is not text', { action: 42, issuer: 'https://acme.test' }, 'got 42'],
    [
      'a kid with suspend_issuer',
      { action: 'suspend_issuer', issuer: 'https://acme.test', kid: 'k-1' },
      'got kid "k-1" with suspend_issuer',
    ],
  ])('names the value found when refusing %s', async (_case, request, found) => {
    await expect(recordControl(operator, request as never)).rejects.toThrow(found);
  });
});

describe('postgresControls on PGlite', () => {
  let lite: PGlite;
  let issuer: TestIssuer;
  beforeAll(async () => {
    issuer = await createTestIssuer({
      audience: AUDIENCE,
      issuer: 'https://lite.test',
      product: 'lite',
      kid: 'lite-1',
    });
    await issuer.listen();
    lite = await createTestPglite();
    await migrate(lite, { only: 'controls' });
  });
  afterAll(async () => {
    await lite.close();
    await issuer.close();
  });

  it('applies an action recorded through it to the verifier attached', async () => {
    const controls = await postgresControls(lite, { pollInterval: NO_POLL });
    const v = createVerifier({ registry: [issuer.entry], audience: AUDIENCE });
    controls.attach(v);
    await controls.suspendIssuer(issuer.issuer);
    expect((await authRejection(v.verify(await issuer.token()))).code).toBe('issuer_suspended');
    await controls.close();
  });

  it('reports a verifier method that throws to onError and still applies the other actions', async () => {
    const errors: unknown[] = [];
    const controls = await postgresControls(lite, { pollInterval: NO_POLL, onError: (error) => errors.push(error) });
    const suspended: string[] = [];
    const failure = new Error('revocation refused');
    controls.attach({
      registry: { has: () => true } as never,
      revokeKey: () => {
        throw failure;
      },
      suspendIssuer: (name) => void suspended.push(name),
      resumeIssuer: () => undefined,
      refresh: async () => ({}) as never,
    });
    await controls.revokeKey('https://other.test', 'k-1');
    await controls.suspendIssuer('https://other.test');
    expect(errors).toEqual([failure]);
    expect(suspended).toContain('https://other.test');
    await controls.close();
  });

  it('logs a failure in one line, cut and escaped, where no onError is given', async () => {
    const lines = vi.spyOn(console, 'error').mockImplementation(() => {});
    const controls = await postgresControls(lite, { pollInterval: NO_POLL });
    try {
      controls.attach({
        registry: { has: () => true } as never,
        revokeKey: () => {
          throw new Error(`refused\nforged line \u202e\u001b[31m${'x'.repeat(5000)}`);
        },
        suspendIssuer: () => undefined,
        resumeIssuer: () => undefined,
        refresh: async () => ({}) as never,
      });
      await controls.revokeKey('https://other.test', 'k-1');
      const logged = lines.mock.calls.map(([line]) => String(line));
      expect(logged).toHaveLength(1);
      expect(logged[0]).toContain('refused\\u000aforged line \\u202e\\u001b[31m');
      expect(logged[0]?.length).toBeLessThan(1100);
    } finally {
      lines.mockRestore();
      await controls.close();
    }
  });
});
