/**
 * The PostgreSQL commands (migrate, revoke-key, suspend-issuer, resume-issuer, refresh-keys,
 * controls) through the dispatcher, against a real PostgreSQL.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/command.js';
import { COMMANDS } from '../../src/cli/commands.js';
import { databaseTarget, openDatabase, withDatabase } from '../../src/cli/database-url.js';
import { SCHEMA_VERSIONS, addIssuer } from '../../src/postgres/index.js';
import { EXIT, runCli } from '../../src/cli/run-cli.js';
import { eventually } from '../postgres/eventually.js';
import { createTestDatabase, skipWithoutPostgres } from '../postgres/pg-server.js';
import { uniqueRole } from '../postgres/roles.js';

const SKIP = skipWithoutPostgres('test/cli/postgres-commands.test.ts');
const ISSUER = 'https://auth.acme.example';
const ACME_ENTRY = { issuer: ISSUER, jwksUri: `${ISSUER}/jwks.json`, products: ['acme'] };

function capture(env: Record<string, string | undefined> = {}): CliIo & { out: () => string; err: () => string } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    env,
    stdout: (text) => out.push(text),
    stderr: (text) => err.push(text),
    out: () => out.join(''),
    err: () => err.join(''),
  };
}

const NAMES = ['migrate', 'revoke-key', 'suspend-issuer', 'resume-issuer', 'refresh-keys', 'controls', 'controls compact', 'fleet'];

describe('the PostgreSQL commands without a database', () => {
  it.each(NAMES)('%s --help prints its usage and DATABASE_URL, and exits 0', async (name) => {
    const io = capture();
    expect(await runCli([name, '--help'], io, COMMANDS)).toBe(EXIT.ok);
    expect(io.out()).toContain(`Usage: paygate-auth ${name}`);
    expect(io.out()).toContain('DATABASE_URL');
  });

  it('lists every command in the general help', async () => {
    const io = capture();
    await runCli(['--help'], io, COMMANDS);
    for (const name of NAMES) expect(io.out()).toContain(`  ${name} `);
  });

  it.each([
    ['DATABASE_URL is not set', ['suspend-issuer', '--issuer', ISSUER], {}, 'DATABASE_URL is not set'],
    ['--kid is missing', ['revoke-key', '--issuer', ISSUER], { DATABASE_URL: 'postgres://x@127.0.0.1:1/x' }, '--kid is required'],
    ['--issuer is missing', ['suspend-issuer'], { DATABASE_URL: 'postgres://x@127.0.0.1:1/x' }, '--issuer is required'],
    ['an option is unknown', ['resume-issuer', '--issuer', ISSUER, '--frobnicate'], {}, 'unknown option "--frobnicate"'],
    ['a value is missing', ['refresh-keys', '--issuer'], {}, '--issuer needs a value'],
    ['an option is repeated', ['refresh-keys', '--issuer', ISSUER, '--issuer=x'], {}, '--issuer is given twice'],
    ['the issuer has a space', ['suspend-issuer', '--issuer', 'https://a b'], {}, 'issuer must be'],
    ['migrate gets an argument', ['migrate', 'now'], {}, 'unexpected argument "now"'],
    [
      '--wait-timeout is over 600 s',
      ['suspend-issuer', '--issuer', ISSUER, '--wait', '--wait-timeout', '601'],
      {},
      '--wait-timeout must be a whole number of seconds from 1 to 600, got "601"',
    ],
    [
      '--wait-timeout comes without --wait',
      ['revoke-key', '--issuer', ISSUER, '--kid', 'k-1', '--wait-timeout', '30'],
      {},
      '--wait-timeout bounds --wait: add --wait',
    ],
    [
      'migrate --only names no area',
      ['migrate', '--only', 'payments'],
      {},
      '--only must be one of links, controls, directory, registry, keys',
    ],
  ])('exits 2 with the rule when %s', async (_case, args, env, message) => {
    const io = capture(env);
    expect(await runCli(args, io, COMMANDS)).toBe(EXIT.usage);
    expect(io.err()).toContain(message);
  });

  it('exits 1 naming the host, never the password, when the database cannot be reached', async () => {
    const io = capture({ DATABASE_URL: 'postgres://gateway:s3cret@127.0.0.1:1/payments' });
    expect(await runCli(['controls'], io, COMMANDS)).toBe(EXIT.failed);
    expect(io.err()).toContain('cannot connect to the database at 127.0.0.1:1/payments');
    expect(io.err()).not.toContain('s3cret');
  });
});

let env: Record<string, string>;

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = capture(env);
  const code = await runCli(args, io, COMMANDS);
  return { code, out: io.out(), err: io.err() };
}

describe.skipIf(SKIP)('the PostgreSQL commands on a real database', () => {
  beforeAll(async () => {
    env = { DATABASE_URL: (await createTestDatabase('cli')).url };
  });

  it('asks for migrate when the tables are missing', async () => {
    expect(await cli('suspend-issuer', '--issuer', ISSUER)).toMatchObject({
      code: EXIT.failed,
      err: expect.stringContaining('run "paygate-auth migrate" first'),
    });
  });

  it('migrates one area with --only, then every area, then says the schema is current', async () => {
    expect(await cli('migrate', '--only', 'controls')).toMatchObject({
      code: EXIT.ok,
      out: 'Applied controls 1, controls 2, controls 3, controls 4, controls 5, controls 6, controls 7, controls 8, controls 9, controls 10; the schema is at controls 10.\n',
    });
    expect(await cli('migrate')).toMatchObject({
      code: EXIT.ok,
      out: 'Applied links 1, links 2, links 3, directory 1, directory 2, registry 1, registry 2, registry 3, registry 4, registry 5, keys 1, keys 2, keys 3, keys 4, keys 5, fleet 1, fleet 2, fleet 3; the schema is at links 3, controls 10, directory 2, registry 5, keys 5, fleet 3.\n',
    });
    expect(await cli('migrate')).toMatchObject({
      code: EXIT.ok,
      out: 'The schema is current (links 3, controls 10, directory 2, registry 5, keys 5, fleet 3).\n',
    });
  });

  it('lists every control although one was inserted by hand at an infinite recorded_at, in its text and its --json', async () => {
    await withDatabase(databaseTarget(undefined, env), (db) =>
      db.query(
        `INSERT INTO paygate_operator_controls (action, issuer, recorded_at) VALUES ('refresh_keys', 'https://hand.test', 'infinity')`,
      ),
    );
    try {
      const listed = await cli('controls');
      expect(listed.code).toBe(EXIT.ok);
      expect(listed.out).toMatch(/ {2}#\d+ {2}no valid time {2}refresh_keys {4}https:\/\/hand\.test\n/);
      const json = await cli('controls', '--json');
      expect(json.code).toBe(EXIT.ok);
      expect((JSON.parse(json.out) as { actions: { issuer: string; recordedAt: unknown }[] }).actions).toContainEqual(
        expect.objectContaining({ issuer: 'https://hand.test', recordedAt: null }),
      );
    } finally {
      await withDatabase(databaseTarget(undefined, env), (db) =>
        db.query(`DELETE FROM paygate_operator_controls WHERE issuer = 'https://hand.test'`),
      );
    }
  });

  it("escapes a hand-made control's issuer and kid, in its text and its --json: no row's text reaches the terminal raw", async () => {
    const issuer = 'https://hand.test/\u009b2J\u202e';
    await withDatabase(databaseTarget(undefined, env), (db) =>
      db.query(`INSERT INTO paygate_operator_controls (action, issuer, kid) VALUES ('revoke_key', $1, $2)`, [issuer, 'k\u2028']),
    );
    try {
      const listed = await cli('controls');
      expect(listed.out).toContain('https://hand.test/\\u009b2J\\u202e  k\\u2028');
      const json = await cli('controls', '--json');
      expect((JSON.parse(json.out) as { revoked: unknown[] }).revoked).toContainEqual({ issuer, kid: 'k\u2028' });
      for (const out of [listed.out, json.out]) expect(out).not.toMatch(/[\u009b\u202e\u2028]/);
    } finally {
      // A revocation is deleted only with the triggers off (controls version 9), as a superuser may.
      await withDatabase(databaseTarget(undefined, env), async (db) => {
        await db.query('SET session_replication_role = replica');
        await db.query('DELETE FROM paygate_operator_controls WHERE issuer = $1', [issuer]);
      });
    }
  });

  it("quotes a heartbeat row's digest written by hand before its constraint: no row's text reaches the terminal raw", async () => {
    await withDatabase(databaseTarget(undefined, env), async (db) => {
      await db.query('ALTER TABLE paygate_instances DROP CONSTRAINT paygate_instances_heartbeat');
      await db.query(
        `INSERT INTO paygate_instances (name, started_at, interval_ms, registry_change, registry_digest) VALUES ('hand', now(), 600000, 0, E'\\x1b[2Jab')`,
      );
      await db.query(`ALTER TABLE paygate_instances ADD CONSTRAINT paygate_instances_heartbeat CHECK (interval_ms > 0) NOT VALID`);
    });
    const { code, out } = await cli('fleet');
    await withDatabase(databaseTarget(undefined, env), (db) => db.query(`DELETE FROM paygate_instances WHERE name = 'hand'`));
    expect(code).toBe(EXIT.ok);
    expect(out).toContain('"hand"  heard');
    expect(out).toContain('registry #0 "\\u001b[2Jab"');
    expect(out).not.toContain('\u001b');
  });

  it("escapes an instance's name in fleet --json: no row's text reaches the terminal raw", async () => {
    const name = 'hand\u202e\u009b';
    await withDatabase(databaseTarget(undefined, env), (db) =>
      db.query(`INSERT INTO paygate_instances (name, started_at, interval_ms) VALUES ($1, now(), 600000)`, [name]),
    );
    try {
      const { code, out } = await cli('fleet', '--all', '--json');
      expect(code).toBe(EXIT.ok);
      expect((JSON.parse(out) as { instances: { name: string }[] }).instances.map((instance) => instance.name)).toContain(name);
      expect(out).not.toMatch(/[\u202e\u009b]/);
    } finally {
      await withDatabase(databaseTarget(undefined, env), (db) => db.query('DELETE FROM paygate_instances WHERE name = $1', [name]));
    }
  });

  it('sets up the roles of least privilege under the names given, saying which it created and what to grant', async () => {
    const [gateway, operator] = [uniqueRole('gateway'), uniqueRole('operator')];
    const { code, out } = await cli('migrate', '--gateway-role', gateway, '--operator-role', operator);
    expect(code).toBe(EXIT.ok);
    expect(out).toContain(`Roles granted: ${gateway} (the gateway's, created), ${operator} (the operator's, created).`);
    expect(out).toContain(`GRANT ${gateway} TO <gateway login>`);
    expect(await cli('migrate', '--operator-role', 'Robert"); DROP')).toMatchObject({
      code: EXIT.usage,
      err: expect.stringContaining('--operator-role must be a role name'),
    });
  });

  it.each([
    ['suspend-issuer', []],
    ['resume-issuer', []],
    ['refresh-keys', []],
    ['revoke-key', ['--kid', 'acme-1']],
  ])('%s refuses an issuer with a trailing slash (exit 1), naming the registered one, and records nothing', async (name, more) => {
    await withDatabase(databaseTarget(undefined, env), (db) => addIssuer(db, ACME_ENTRY, { by: 'test' }).catch(() => undefined));
    const before = (await cli('controls', '--json')).out;
    expect(await cli(name, '--issuer', `${ISSUER}/`, ...more)).toMatchObject({
      code: EXIT.failed,
      err: expect.stringContaining(`issuer "${ISSUER}/" is not registered; the registry has "${ISSUER}" (a trailing slash): give that`),
    });
    expect((await cli('controls', '--json')).out).toBe(before);
  });

  it('refuses an issuer that is nothing like a registered one, saying how many are, and --force records it all the same', async () => {
    expect(await cli('suspend-issuer', '--issuer', 'not-a-url')).toMatchObject({
      code: EXIT.failed,
      err: expect.stringMatching(/issuer "not-a-url" is not registered; the registry holds \d+ issuer\(s\) .*--force/),
    });
    expect(await cli('suspend-issuer', '--issuer', 'https://later.example', '--force')).toMatchObject({
      code: EXIT.ok,
      out: expect.stringContaining('Suspended https://later.example'),
    });
    expect((await cli('resume-issuer', '--issuer', 'https://later.example', '--force')).code).toBe(EXIT.ok);
  });

  it('records actions, and controls lists what is in force', async () => {
    expect(await cli('revoke-key', '--issuer', ISSUER, '--kid', 'acme-1')).toMatchObject({
      code: EXIT.ok,
      out: expect.stringMatching(/^Revoked key acme-1 of https:\/\/auth\.acme\.example \(control #\d+, /),
    });
    expect((await cli('suspend-issuer', `--issuer=${ISSUER}`)).code).toBe(EXIT.ok);
    expect((await cli('refresh-keys', '--issuer', ISSUER)).code).toBe(EXIT.ok);
    const listed = await cli('controls');
    expect(listed.out).toContain(`Suspended issuers:\n  ${ISSUER}\nRevoked keys:\n  ${ISSUER}  acme-1\n`);
    expect((await cli('resume-issuer', '--issuer', ISSUER)).out).toMatch(/^Resumed https:\/\/auth\.acme\.example/);
    const json = JSON.parse((await cli('controls', '--json')).out) as {
      suspended: string[];
      revoked: unknown[];
      actions: { action: string }[];
    };
    expect(json.suspended).toEqual([]);
    expect(json.revoked).toEqual([{ issuer: ISSUER, kid: 'acme-1' }]);
    expect(json.actions.map((action) => action.action).slice(-4)).toEqual([
      'revoke_key',
      'suspend_issuer',
      'refresh_keys',
      'resume_issuer',
    ]);
  });

  it('compacts the controls to the ones in force', async () => {
    expect((await cli('suspend-issuer', '--issuer', ISSUER)).code).toBe(EXIT.ok);
    const before = JSON.parse((await cli('controls', '--json')).out) as { actions: unknown[] };
    expect(await cli('controls', 'compact')).toMatchObject({
      code: EXIT.ok,
      out: `Compacted the operator controls: ${before.actions.length - 2} rows deleted, 2 kept.\n`,
    });
    const after = JSON.parse((await cli('controls', '--json')).out) as { actions: { action: string }[] };
    expect(after.actions.map((action) => action.action)).toEqual(['revoke_key', 'suspend_issuer']);
  });

  it('revoke-key refuses a kid the key history does not hold for the issuer (exit 1), naming the nearest, and records nothing', async () => {
    await withDatabase(databaseTarget(undefined, env), async (db) => {
      await addIssuer(db, ACME_ENTRY, { by: 'test' }).catch(() => undefined);
      await db.query(`INSERT INTO paygate_key_history (issuer, kid, first_seen) VALUES ($1, 'acme-2026-a', 0), ($1, 'acme-2026-b', 0)`, [
        ISSUER,
      ]);
    });
    try {
      const before = (await cli('controls', '--json')).out;
      const refused = await cli('revoke-key', '--issuer', ISSUER, '--kid', 'acme-2026-c');
      expect(refused.code).toBe(EXIT.failed);
      expect(refused.err).toContain('kid "acme-2026-c" is not a key of "https://auth.acme.example" in the key history, which holds 2');
      expect(refused.err).toContain('did you mean "acme-2026-a"?');
      expect(refused.err).toContain('--force');
      expect((await cli('controls', '--json')).out).toBe(before);
      expect((await cli('revoke-key', '--issuer', ISSUER, '--kid', 'acme-2026-b')).code).toBe(EXIT.ok);
      expect((await cli('revoke-key', '--issuer', ISSUER, '--kid', 'acme-2026-c', '--force')).code).toBe(EXIT.ok);
    } finally {
      await withDatabase(databaseTarget(undefined, env), (db) => db.query('DELETE FROM paygate_key_history WHERE issuer = $1', [ISSUER]));
    }
  });

  it('suspend-issuer and resume-issuer each print the command that undoes them; revoke-key that nothing does', async () => {
    await withDatabase(databaseTarget(undefined, env), (db) => addIssuer(db, ACME_ENTRY, { by: 'test' }).catch(() => undefined));
    await cli('resume-issuer', '--issuer', ISSUER); // not suspended, whatever the tests before left
    expect((await cli('suspend-issuer', '--issuer', ISSUER)).out).toContain(`To undo: paygate-auth resume-issuer --issuer ${ISSUER}\n`);
    expect((await cli('resume-issuer', '--issuer', ISSUER)).out).toContain(`To undo: paygate-auth suspend-issuer --issuer ${ISSUER}\n`);
    expect((await cli('revoke-key', '--issuer', ISSUER, '--kid', 'acme-undo-1')).out).toContain('This cannot be undone');
  });

  it('says when a control changed nothing in force (a repeat, a resumption of an issuer not suspended), and offers no undo then', async () => {
    await withDatabase(databaseTarget(undefined, env), (db) => addIssuer(db, ACME_ENTRY, { by: 'test' }).catch(() => undefined));
    await cli('resume-issuer', '--issuer', ISSUER);
    const resumed = await cli('resume-issuer', '--issuer', ISSUER);
    expect(resumed.code).toBe(EXIT.ok);
    expect(resumed.out).toMatch(/^Resumed https:\/\/auth\.acme\.example \(it was not suspended\) \(control #\d+, /);
    expect(resumed.out).toContain('nothing to undo');
    expect(resumed.out).not.toContain('suspend-issuer');
    expect((await cli('suspend-issuer', '--issuer', ISSUER)).out).not.toContain('already');
    const again = await cli('suspend-issuer', '--issuer', ISSUER);
    expect(again.out).toContain('(it was suspended already)');
    expect(again.out).not.toContain('resume-issuer');
    await cli('resume-issuer', '--issuer', ISSUER);
  });

  it('fails a command whose connection the server cuts between two queries, leaving nothing uncaught', async () => {
    const operator = await openDatabase(databaseTarget(undefined, env));
    const cut = withDatabase(databaseTarget(undefined, env), async (db) => {
      const { rows } = await db.query('SELECT pg_backend_pid() AS pid');
      const { pid } = rows[0] as { pid: number };
      await operator.query('SELECT pg_terminate_backend($1)', [pid]);
      await eventually(
        'the backend has ended',
        async () => (await operator.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rows.length === 0,
      );
      await db.query('SELECT 1');
    });
    await expect(cut).rejects.toThrow(/connection|terminat/);
    await operator.end();
  });
});

describe.skipIf(SKIP)('the PostgreSQL commands on a database migrated by a newer paygate-auth', () => {
  let newer: Record<string, string>;
  const run = async (...args: string[]) => {
    const io = capture(newer);
    return { code: await runCli(args, io, COMMANDS), out: io.out(), err: io.err() };
  };

  beforeAll(async () => {
    newer = { DATABASE_URL: (await createTestDatabase('cli_newer')).url };
    expect((await run('migrate')).code).toBe(EXIT.ok);
    await withDatabase(databaseTarget(undefined, newer), (db) =>
      db.query(`INSERT INTO paygate_schema_migrations (area, version, description) VALUES ('controls', $1, 'a later version')`, [
        SCHEMA_VERSIONS.controls + 1,
      ]),
    );
  });

  it.each([
    ['suspend-issuer', ['suspend-issuer', '--issuer', ISSUER, '--force']],
    ['revoke-key', ['revoke-key', '--issuer', ISSUER, '--kid', 'k-1', '--force']],
    ['controls compact', ['controls', 'compact']],
  ])('%s changes nothing (exit 1), naming the area and both versions', async (_name, args) => {
    const ran = await run(...args);
    expect(ran.code).toBe(EXIT.failed);
    expect(ran.err).toContain(`"controls" schema version ${SCHEMA_VERSIONS.controls + 1}, newer than ${SCHEMA_VERSIONS.controls}`);
    const { rows } = await withDatabase(databaseTarget(undefined, newer), (db) =>
      db.query('SELECT count(*)::int AS n FROM paygate_operator_controls'),
    );
    expect(rows[0]).toEqual({ n: 0 });
  });

  it('still lists the controls, and changes the registry, whose area is not newer', async () => {
    expect((await run('controls')).code).toBe(EXIT.ok);
    expect((await run('issuers', 'remove', ISSUER)).err).toContain('is not registered');
  });
});

describe.skipIf(SKIP)('the PostgreSQL commands on a database never migrated', () => {
  it('controls --json writes the error code tables_missing on stdout, and says to run migrate (exit 1)', async () => {
    const io = capture({ DATABASE_URL: (await createTestDatabase('cli_bare')).url });
    expect(await runCli(['controls', '--json'], io, COMMANDS)).toBe(EXIT.failed);
    expect(JSON.parse(io.out())).toEqual({
      error: { code: 'tables_missing', exit: 1, message: 'the tables are missing: run "paygate-auth migrate" first' },
    });
  });
});
