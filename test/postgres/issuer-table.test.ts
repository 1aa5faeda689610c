/**
 * The issuer registry's table on a real PostgreSQL: each change written with its audit row and
 * notification in one transaction (both the database's own doing, whoever writes), refused
 * changes writing nothing, concurrent changes serialized, the audit append-only.
 */
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { IssuerEntry } from '../../src/index.js';
import {
  IssuerChangeError,
  addIssuer,
  importIssuers,
  migrate,
  readIssuerChanges,
  readIssuers,
  readLastIssuerChange,
  removeIssuer,
  updateIssuer,
} from '../../src/postgres/index.js';
import { REGISTRY_CHANNEL, TABLES } from '../../src/postgres/schema-names.js';
import { eventually } from './eventually.js';
import { type TestDatabase, createTestDatabase, openPool, skipWithoutPostgres } from './pg-server.js';
import { clearRegistry, loginRole, urlAs, writtenBeforeKeyCheck } from './roles.js';

const SKIP = skipWithoutPostgres('test/postgres/issuer-table.test.ts');

const ACME: IssuerEntry = { issuer: 'https://acme.test', jwksUri: 'https://acme.test/jwks.json', products: ['acme'] };
const BETA: IssuerEntry = { issuer: 'https://beta.test', jwksUri: 'https://beta.test/jwks.json', products: ['beta'], tenants: ['t1'] };
const BY = { by: 'alice' };

let db: TestDatabase;
let pool: pg.Pool;

async function code(promise: Promise<unknown>): Promise<string | undefined> {
  return promise.then(
    () => undefined,
    (error: { code?: string }) => error.code,
  );
}

async function rowCounts(): Promise<{ issuers: number; changes: number }> {
  const { rows } = await pool.query(
    `SELECT (SELECT count(*)::int FROM ${TABLES.issuers}) AS issuers, (SELECT count(*)::int FROM ${TABLES.issuerChanges}) AS changes`,
  );
  return rows[0] as { issuers: number; changes: number };
}

describe.skipIf(SKIP)('the issuer registry table on a real PostgreSQL', () => {
  beforeAll(async () => {
    db = await createTestDatabase('issuer_table');
    pool = openPool(db.url, { max: 6 });
    await migrate(pool, { only: 'registry' });
  });

  afterAll(async () => {
    await pool?.end();
  });

  beforeEach(() => clearRegistry(pool));

  it('adds an issuer with who added it and logs the change with no before, the operator named and the role kept', async () => {
    const change = await addIssuer(pool, ACME, BY);
    expect(change).toMatchObject({ issuer: ACME.issuer, action: 'add', before: null, after: ACME, actor: 'alice', role: 'postgres' });
    const [record] = await readIssuers(pool);
    expect(record).toMatchObject({ entry: ACME, addedBy: 'alice', updatedBy: 'alice' });
    expect(record?.addedAt.getTime()).toBe(change.at.getTime());
    expect(Object.isFrozen(record?.entry.products)).toBe(true);
  });

  it('refuses to add an issuer registered already with issuer_exists, writing nothing', async () => {
    await addIssuer(pool, ACME, BY);
    const error = await addIssuer(pool, { ...ACME, products: ['other'] }, BY).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(IssuerChangeError);
    expect(error).toMatchObject({ code: 'issuer_exists', issuer: ACME.issuer });
    expect(await rowCounts()).toEqual({ issuers: 1, changes: 1 });
  });

  it('replaces the whole entry on update, keeping who added it, and logs before and after', async () => {
    await addIssuer(pool, BETA, BY);
    const next = { ...BETA, tenants: ['t2'] };
    const change = await updateIssuer(pool, next, { by: 'bob' });
    expect(change).toMatchObject({ action: 'update', before: BETA, after: next, actor: 'bob' });
    const [record] = await readIssuers(pool);
    expect(record).toMatchObject({ entry: next, addedBy: 'alice', updatedBy: 'bob' });
  });

  it('refuses to update an issuer not registered with issuer_not_found', async () => {
    expect(await code(updateIssuer(pool, ACME, BY))).toBe('issuer_not_found');
    expect(await rowCounts()).toEqual({ issuers: 0, changes: 0 });
  });

  it('refuses an update registering the same rules with issuer_unchanged, the order of names aside', async () => {
    await addIssuer(pool, { ...ACME, products: ['acme', 'acme-2'] }, BY);
    expect(await code(updateIssuer(pool, { ...ACME, products: ['acme-2', 'acme'] }, BY))).toBe('issuer_unchanged');
    expect(await rowCounts()).toEqual({ issuers: 1, changes: 1 });
  });

  it('applies an update made from the entry the table still holds (expected)', async () => {
    await addIssuer(pool, BETA, BY);
    const change = await updateIssuer(pool, { ...BETA, tenants: ['t1', 't2'] }, { by: 'bob', expected: BETA });
    expect(change).toMatchObject({ action: 'update', after: { tenants: ['t1', 't2'] } });
  });

  it('refuses an update made from an entry changed since (expected) with issuer_changed_meanwhile, so no change is undone', async () => {
    await addIssuer(pool, BETA, BY);
    // Two operators read BETA; the first adds tenant t2, the second then adds t3 to what it read.
    await updateIssuer(pool, { ...BETA, tenants: ['t1', 't2'] }, { by: 'bob', expected: BETA });
    expect(await code(updateIssuer(pool, { ...BETA, tenants: ['t1', 't3'] }, { by: 'carol', expected: BETA }))).toBe(
      'issuer_changed_meanwhile',
    );
    expect((await readIssuers(pool))[0]?.entry.tenants).toEqual(['t1', 't2']);
    expect(await rowCounts()).toEqual({ issuers: 1, changes: 2 });
  });

  it('refuses an update made from a change the issuer has moved past (unchangedSince); changes of other issuers do not count', async () => {
    const added = await addIssuer(pool, BETA, BY);
    await addIssuer(pool, ACME, BY);
    const [record] = (await readIssuers(pool)).filter((held) => held.issuer === BETA.issuer);
    expect(record?.change).toBe(added.id);
    await updateIssuer(pool, { ...BETA, tenants: ['t1', 't2'] }, { by: 'bob', unchangedSince: added.id });
    expect(await code(updateIssuer(pool, { ...BETA, tenants: ['t3'] }, { by: 'carol', unchangedSince: added.id }))).toBe(
      'issuer_changed_meanwhile',
    );
    expect((await readIssuers(pool)).find((held) => held.issuer === BETA.issuer)?.entry.tenants).toEqual(['t1', 't2']);
  });

  it('refuses a whole import when one of its issuers changed after unchangedSince, naming it and writing nothing', async () => {
    await addIssuer(pool, ACME, BY);
    const since = await readLastIssuerChange(pool);
    await updateIssuer(pool, { ...ACME, products: ['acme-2'] }, { by: 'bob' });
    const error = await importIssuers(pool, [BETA, { ...ACME, products: ['acme-3'] }], { by: 'carol', unchangedSince: since }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: 'issuer_changed_meanwhile', issuer: ACME.issuer });
    expect(await rowCounts()).toEqual({ issuers: 1, changes: 2 });
    const fresh = await readLastIssuerChange(pool);
    expect((await importIssuers(pool, [BETA, { ...ACME, products: ['acme-3'] }], { by: 'carol', unchangedSince: fresh })).updated).toEqual([
      ACME.issuer,
    ]);
  });

  it.each([-1, 1.5, '3'])('refuses an unchangedSince of %s with a TypeError naming it', async (unchangedSince) => {
    await expect(updateIssuer(pool, ACME, { by: 'bob', unchangedSince: unchangedSince as number })).rejects.toThrow(
      /updateIssuer: unchangedSince must be a change id/,
    );
  });

  it('refuses an expected entry of another issuer, naming it, before writing', async () => {
    await addIssuer(pool, BETA, BY);
    await expect(updateIssuer(pool, { ...BETA, tenants: ['t2'] }, { by: 'bob', expected: ACME })).rejects.toThrow(
      expect.objectContaining({ name: 'TypeError', message: expect.stringContaining('expected.issuer') }),
    );
    expect(await rowCounts()).toEqual({ issuers: 1, changes: 1 });
  });

  it('removes an issuer and logs the entry it had', async () => {
    await addIssuer(pool, ACME, BY);
    const change = await removeIssuer(pool, ACME.issuer, { by: 'carol' });
    expect(change).toMatchObject({ action: 'remove', before: ACME, after: null, actor: 'carol' });
    expect(await readIssuers(pool)).toEqual([]);
  });

  it('refuses to remove an issuer not registered with issuer_not_found', async () => {
    expect(await code(removeIssuer(pool, ACME.issuer, BY))).toBe('issuer_not_found');
    expect(await rowCounts()).toEqual({ issuers: 0, changes: 0 });
  });

  it('names a hostile issuer in a refusal cut and escaped on one line', async () => {
    const hostile = `https://x.test/\n\u202eINFO forged ${'a'.repeat(500)}`;
    const error = (await removeIssuer(pool, hostile, BY).catch((caught: unknown) => caught)) as IssuerChangeError;
    expect(error.issuer).toBe(hostile);
    expect(error.message).not.toMatch(/[\n\u202e]/);
    expect(error.message.length).toBeLessThan(200);
  });

  it('imports new entries, updates changed ones, leaves equal ones, and never removes', async () => {
    await addIssuer(pool, ACME, BY);
    await addIssuer(pool, BETA, BY);
    await addIssuer(pool, { ...ACME, issuer: 'https://kept.test' }, BY);
    const gamma = { ...ACME, issuer: 'https://gamma.test' };
    const report = await importIssuers(pool, [gamma, { ...BETA, tenants: ['t9'] }, ACME], { by: 'import' });
    expect([report.added, report.updated, report.unchanged]).toEqual([[gamma.issuer], [BETA.issuer], [ACME.issuer]]);
    expect(report.changes.map((change) => [change.action, change.issuer])).toEqual([
      ['add', gamma.issuer],
      ['update', BETA.issuer],
    ]);
    expect((await readIssuers(pool)).map((record) => record.entry.issuer)).toEqual([
      ACME.issuer,
      BETA.issuer,
      gamma.issuer,
      'https://kept.test',
    ]);
  });

  it('imports all or nothing: a bad entry names its field and writes nothing', async () => {
    const bad = { ...BETA, issuer: 'https://bad.test', tenants: ['no spaces'] };
    await expect(importIssuers(pool, [ACME, bad], BY)).rejects.toThrow(
      new TypeError(
        'IssuerRegistry: entries[1] ("https://bad.test").tenants[0] must be a name of letters, digits, "-", "_" and ".", got "no spaces"',
      ),
    );
    expect(await rowCounts()).toEqual({ issuers: 0, changes: 0 });
  });

  it('refuses an import repeating an issuer', async () => {
    await expect(importIssuers(pool, [ACME, ACME], BY)).rejects.toThrow(/entries\[1\]\.issuer repeats/);
    expect(await rowCounts()).toEqual({ issuers: 0, changes: 0 });
  });

  it.each([
    ['an http jwksUri off loopback', { ...ACME, jwksUri: 'http://acme.test/jwks.json' }, /\("https:\/\/acme\.test"\)\.jwksUri/],
    ['no products', { ...ACME, products: [] }, /\("https:\/\/acme\.test"\)\.products/],
    ['an unknown field', { ...ACME, audience: 'x' }, /\("https:\/\/acme\.test"\)\.audience is not an entry field/],
    ['an issuer that is not https', { ...ACME, issuer: 'ftp://acme.test' }, /entries\[0\]\.issuer/],
  ])('refuses to add an entry with %s, naming the field and writing nothing', async (_case, entry, message) => {
    await expect(addIssuer(pool, entry as IssuerEntry, BY)).rejects.toThrow(message);
    await expect(updateIssuer(pool, entry as IssuerEntry, BY)).rejects.toThrow(message);
    expect(await rowCounts()).toEqual({ issuers: 0, changes: 0 });
  });

  it.each([
    ['no actor', {}],
    ['an empty actor', { by: '' }],
    ['an actor over 200 characters', { by: 'a'.repeat(201) }],
    ['an actor with a line break', { by: 'alice\nINFO forged' }],
  ])('refuses a change with %s, naming by', async (_case, options) => {
    await expect(addIssuer(pool, ACME, options as { by: string })).rejects.toThrow(/addIssuer: by must be/);
    expect(await rowCounts()).toEqual({ issuers: 0, changes: 0 });
  });

  it.each([
    ['no actor', {}, 'got undefined'],
    ['an actor that is not text', { by: 42 }, 'got 42'],
    ['an actor over 200 characters', { by: 'a'.repeat(201) }, 'got 201 characters'],
    ['an actor with a line break', { by: 'alice\nINFO forged' }, 'got "alice\\u000aINFO forged"'],
  ])('names the actor found when refusing %s', async (_case, options, found) => {
    await expect(addIssuer(pool, ACME, options as { by: string })).rejects.toThrow(found);
  });

  it.each([
    ['an empty issuer', '', 'got ""'],
    ['an issuer that is not text', 42, 'got 42'],
  ])('names the issuer found when refusing %s', async (_case, issuer, found) => {
    await expect(removeIssuer(pool, issuer as string, BY)).rejects.toThrow(found);
    await expect(readIssuerChanges(pool, { issuer: issuer as string })).rejects.toThrow(found);
  });

  it('refuses a bad statementTimeout, naming it', async () => {
    await expect(removeIssuer(pool, ACME.issuer, { by: 'alice', statementTimeout: 0 })).rejects.toThrow(/statementTimeout/);
  });

  it('lets one of two concurrent adds of the same issuer win; the other gets issuer_exists', async () => {
    const results = await Promise.allSettled([addIssuer(pool, ACME, { by: 'one' }), addIssuer(pool, ACME, { by: 'two' })]);
    expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
    const lost = results.find((result) => result.status === 'rejected') as PromiseRejectedResult;
    expect((lost.reason as IssuerChangeError).code).toBe('issuer_exists');
    expect(await rowCounts()).toEqual({ issuers: 1, changes: 1 });
  });

  it('keeps the audit trail in order, for every issuer or one', async () => {
    await addIssuer(pool, ACME, BY);
    await addIssuer(pool, BETA, BY);
    await updateIssuer(pool, { ...ACME, products: ['acme-2'] }, BY);
    await removeIssuer(pool, ACME.issuer, BY);
    const all = await readIssuerChanges(pool);
    expect(all.map((change) => [change.action, change.issuer])).toEqual([
      ['add', ACME.issuer],
      ['add', BETA.issuer],
      ['update', ACME.issuer],
      ['remove', ACME.issuer],
    ]);
    expect(all.map((change) => change.id)).toEqual([...all.map((change) => change.id)].sort((a, b) => a - b));
    const acme = await readIssuerChanges(pool, { issuer: ACME.issuer });
    expect(acme.map((change) => [change.action, change.before?.products ?? null, change.after?.products ?? null])).toEqual([
      ['add', null, ['acme']],
      ['update', ['acme'], ['acme-2']],
      ['remove', ['acme-2'], null],
    ]);
  });

  it('audits a plain INSERT by a role with only INSERT on the registry: that role, no name, notified', async () => {
    const writer = await loginRole(pool, 'writer');
    await pool.query(`GRANT INSERT ON ${TABLES.issuers} TO ${writer}`);
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    const payloads: string[] = [];
    listener.on('notification', (message) => payloads.push(message.payload ?? ''));
    await listener.query(`LISTEN ${REGISTRY_CHANNEL}`);
    const hand = new pg.Client({ connectionString: urlAs(db.url, writer) });
    await hand.connect();
    try {
      await hand.query(`INSERT INTO ${TABLES.issuers} (issuer, entry) VALUES ($1, $2)`, [ACME.issuer, JSON.stringify(ACME)]);
      const [change] = await readIssuerChanges(pool);
      expect(change).toMatchObject({ issuer: ACME.issuer, action: 'add', before: null, after: ACME, actor: null, role: writer });
      expect((await readIssuers(pool))[0]).toMatchObject({ entry: ACME, addedBy: writer, updatedBy: writer });
      await eventually('the notification arrives', () => payloads.length > 0);
      expect(payloads).toEqual([String(change?.id)]);
    } finally {
      await Promise.all([hand.end(), listener.end()]);
    }
  });

  it('keeps the operator name a session sets (paygate.actor) beside its role, for a hand-made UPDATE and DELETE too', async () => {
    await addIssuer(pool, ACME, BY);
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SET LOCAL paygate.actor = 'dave'`);
      await client.query(`UPDATE ${TABLES.issuers} SET entry = jsonb_set(entry, '{products}', '["acme-2"]')`);
      await client.query('COMMIT');
      await client.query(`DELETE FROM ${TABLES.issuers}`);
    } finally {
      client.release();
    }
    const changes = await readIssuerChanges(pool);
    expect(changes.map(({ action, actor, role }) => ({ action, actor, role }))).toEqual([
      { action: 'add', actor: 'alice', role: 'postgres' },
      { action: 'update', actor: 'dave', role: 'postgres' },
      { action: 'remove', actor: null, role: 'postgres' },
    ]);
    expect(changes[1]).toMatchObject({ before: ACME, after: { ...ACME, products: ['acme-2'] } });
  });

  it('audits an UPDATE of the key as the removal of one issuer and the addition of another', async () => {
    await addIssuer(pool, ACME, BY);
    await pool.query(
      `UPDATE ${TABLES.issuers} SET issuer = 'https://moved.test', entry = jsonb_set(entry, '{issuer}', '"https://moved.test"')`,
    );
    const changes = await readIssuerChanges(pool);
    expect(changes.slice(1).map(({ action, issuer }) => [action, issuer])).toEqual([
      ['remove', ACME.issuer],
      ['add', 'https://moved.test'],
    ]);
  });

  it.each([
    ['UPDATE', `UPDATE ${TABLES.issuerChanges} SET actor = 'someone else'`],
    ['DELETE', `DELETE FROM ${TABLES.issuerChanges}`],
    ['TRUNCATE', `TRUNCATE ${TABLES.issuerChanges}`],
    ['a forged INSERT', `INSERT INTO ${TABLES.issuerChanges} (issuer, action, actor) VALUES ('https://acme.test', 'update', 'hand')`],
  ])('refuses %s on the audit, to its owner (a superuser) too, changing nothing', async (_what, statement) => {
    await addIssuer(pool, ACME, BY);
    const before = await readIssuerChanges(pool);
    await expect(pool.query(statement)).rejects.toMatchObject({ code: '42501', message: expect.stringContaining('audit trail') });
    expect(await readIssuerChanges(pool)).toEqual(before);
  });

  it('refuses to add an issuer longer than an operator control may name, giving its length and the limit, writing nothing', async () => {
    const long = { ...ACME, issuer: `https://acme.test/${'a'.repeat(3000 - 18)}` };
    const error = await addIssuer(pool, long, BY).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(/^addIssuer: entries\[0\]\.issuer must be at most 2048 characters .*got 3000 characters/);
    expect(await rowCounts()).toEqual({ issuers: 0, changes: 0 });
  });

  it('refuses a hand-made row whose issuer is longer than 2048 characters (constraint paygate_issuers_issuer_length)', async () => {
    const issuer = `https://acme.test/${'a'.repeat(2049 - 18)}`;
    await expect(
      pool.query(`INSERT INTO ${TABLES.issuers} (issuer, entry) VALUES ($1, $2)`, [issuer, JSON.stringify({ ...ACME, issuer })]),
    ).rejects.toMatchObject({ code: '23514', constraint: `${TABLES.issuers}_issuer_length` });
    expect(await rowCounts()).toEqual({ issuers: 0, changes: 0 });
  });

  it("keeps recording changes after the audit's id sequence was moved back (setval): the next id is past every one recorded", async () => {
    await addIssuer(pool, ACME, BY);
    const last = await removeIssuer(pool, ACME.issuer, BY);
    await pool.query(`SELECT setval('${TABLES.issuerChanges}_id_seq', 1)`);
    const added = await addIssuer(pool, BETA, BY);
    expect(added.id).toBe(last.id + 1);
    expect((await readIssuerChanges(pool)).map((change) => change.id)).toEqual([last.id - 1, last.id, last.id + 1]);
  });

  it('refuses TRUNCATE of the registry table, whose removals would escape the audit', async () => {
    await addIssuer(pool, ACME, BY);
    await expect(pool.query(`TRUNCATE ${TABLES.issuers}`)).rejects.toMatchObject({ code: '42501' });
    expect(await rowCounts()).toEqual({ issuers: 1, changes: 1 });
  });

  it('commits change ids in their order, so a reader taking every id past the highest it has seen misses none', async () => {
    // Each writer draws its id, then lingers before committing. Were ids drawn without the
    // trigger's lock, a later id could commit first and the reader would skip the earlier one.
    const writers = 12;
    const racing = openPool(db.url, { max: writers + 1 });
    const seen = new Set<number>();
    let watermark = 0;
    let writing = true;
    const reader = (async () => {
      for (;;) {
        // A read that began after every writer committed, and found nothing new, is the last one.
        const last = !writing;
        const { rows } = await racing.query(`SELECT id FROM ${TABLES.issuerChanges} WHERE id > $1 ORDER BY id`, [watermark]);
        for (const row of rows) seen.add(Number(row.id));
        watermark = Math.max(watermark, ...rows.map((row) => Number(row.id)));
        if (last && rows.length === 0) break;
      }
    })();
    await Promise.all(
      Array.from({ length: writers }, async (_, index) => {
        const client = await racing.connect();
        try {
          await client.query('BEGIN');
          const entry = { ...ACME, issuer: `https://racer-${index}.test` };
          await client.query(`INSERT INTO ${TABLES.issuers} (issuer, entry) VALUES ($1, $2)`, [entry.issuer, JSON.stringify(entry)]);
          await client.query('SELECT pg_sleep($1)', [((index * 7) % 5) / 100]);
          await client.query('COMMIT');
        } finally {
          client.release();
        }
      }),
    );
    writing = false;
    await reader;
    await racing.end();
    const all = (await readIssuerChanges(pool)).map((change) => change.id);
    expect(all).toHaveLength(writers);
    expect([...seen].sort((a, b) => a - b)).toEqual(all);
  });

  it('marks in readIssuers each row every instance leaves out, with its rule; a decoy can be removed, a bad entry replaced', async () => {
    await addIssuer(pool, ACME, BY);
    await addIssuer(pool, BETA, BY);
    await pool.query(`UPDATE ${TABLES.issuers} SET entry = jsonb_set(entry, '{products}', '[]') WHERE issuer = $1`, [BETA.issuer]);
    await writtenBeforeKeyCheck(pool, () =>
      pool.query(`INSERT INTO ${TABLES.issuers} (issuer, entry) VALUES ('decoy', $1)`, [JSON.stringify(ACME)]),
    );
    const marks = async () => (await readIssuers(pool)).map((record) => [record.issuer, record.refused?.rule ?? null]);
    expect(await marks()).toEqual([
      ['decoy', 'key_mismatch'],
      [ACME.issuer, 'repeated_issuer'],
      [BETA.issuer, 'invalid_entry'],
    ]);
    await removeIssuer(pool, 'decoy', BY);
    await updateIssuer(pool, BETA, BY);
    expect(await marks()).toEqual([
      [ACME.issuer, null],
      [BETA.issuer, null],
    ]);
  });

  it('notifies the registry channel with each change, when it commits', async () => {
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    const payloads: string[] = [];
    listener.on('notification', (message) => {
      if (message.channel === REGISTRY_CHANNEL) payloads.push(message.payload ?? '');
    });
    await listener.query(`LISTEN ${REGISTRY_CHANNEL}`);
    try {
      const change = await addIssuer(pool, ACME, BY);
      await code(addIssuer(pool, ACME, BY));
      await eventually('the notification arrives', () => payloads.length > 0);
      expect(payloads).toEqual([String(change.id)]);
    } finally {
      await listener.end();
    }
  });
});
