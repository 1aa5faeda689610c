/**
 * `paygate-auth keys status` against a real PostgreSQL: the key history a verifier shared
 * (postgresKeyHistory), driven by a test issuer and a frozen clock through the three key-rule
 * breaches, a restart, and values from the database that must not reach the terminal raw.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands.js';
import { EXIT, runCli } from '../../src/cli/run-cli.js';
import { type KeyHistoryEntry, createVerifier } from '../../src/index.js';
import { addIssuer, migrate, postgresKeyHistory } from '../../src/postgres/index.js';
import { type TestIssuer, createTestIssuer } from '../../src/testing/index.js';
import { createTestDatabase, openPool, skipWithoutPostgres } from '../postgres/pg-server.js';
import { type FakeClock, fakeClock } from '../support/jwks-clock.js';
import { captureIo } from './cli-io.js';

const SKIP = skipWithoutPostgres('test/cli/keys-status.test.ts');
const AUDIENCE = 'https://payments.test';
const ISSUER = 'https://acme.test';
const MINUTE = 60;
const DAY = 86_400;

let pool: pg.Pool;
let env: Record<string, string>;
let clock: FakeClock;
let issuer: TestIssuer;
let start: number;

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = { ...captureIo(), env };
  const code = await runCli(args, io, COMMANDS);
  return { code, out: io.out(), err: io.err() };
}

/** One gateway instance's life: a verifier sharing its key history until `work` is done. */
async function gateway(work: (verifier: ReturnType<typeof createVerifier>) => Promise<void>): Promise<void> {
  const keys = await postgresKeyHistory(pool, { onError: () => undefined });
  // A stale window of 7 days keeps a withdrawn key 8 days (the retention), past the 4-day restart below.
  const verifier = createVerifier({ registry: [issuer.entry], audience: AUDIENCE, now: clock.now, cache: false, jwksStaleWindow: 7 * DAY });
  keys.attach(verifier);
  await work(verifier);
  await keys.close();
}

/** The lines of the block of `kid` in the output. */
function block(out: string, kid: string): string {
  const lines = out.split('\n');
  const first = lines.indexOf(`  kid "${kid}"`);
  expect(first).toBeGreaterThanOrEqual(0);
  return lines.slice(first, first + 8).join('\n');
}

describe('keys status without a database', () => {
  it('prints its usage and DATABASE_URL for --help, and is listed', async () => {
    env = {};
    const help = await cli('keys', 'status', '--help');
    expect(help.code).toBe(EXIT.ok);
    expect(help.out).toContain('Usage: paygate-auth keys status [issuer]');
    expect(help.out).toContain('DATABASE_URL');
    expect((await cli('--help')).out).toContain('  keys status ');
  });

  it.each([
    ['an option is unknown', ['--all'], 'unknown option "--all"'],
    ['two issuers are given', ['https://a.test', 'https://b.test'], 'unexpected argument "https://b.test"'],
    ['--now is no date', ['--now', 'tomorrow'], '--now must be an ISO 8601 date'],
    ['--now is "-1", which Date.parse reads as 2001', ['--now', '-1'], '--now must be an ISO 8601 date'],
    ['--now is "Dec 7", a date without its year', ['--now', 'Dec 7'], '--now must be an ISO 8601 date'],
    ["--now is a day past its month's end, which Date.parse rolls over", ['--now', '2030-02-31'], '--now must be an ISO 8601 date'],
    ['--now is a time without its zone', ['--now', '2030-01-01T12:00'], 'a time without its zone: add Z'],
    ['--now is past the last date a clock can show', ['--now', '8640000000001'], '--now must be an ISO 8601 date'],
    ['the issuer is empty', [''], 'the issuer must not be empty, got "": give an issuer (its iss), or none'],
    ['DATABASE_URL is not set', [], 'DATABASE_URL is not set'],
  ])('exits 2 naming the rule when %s', async (_case, args, message) => {
    env = {};
    const result = await cli('keys', 'status', ...args);
    expect(result.code).toBe(EXIT.usage);
    expect(result.err).toContain(message);
  });
});

describe.skipIf(SKIP)('keys status on a real database', () => {
  beforeAll(async () => {
    env = { DATABASE_URL: (await createTestDatabase('keys_status')).url };
    pool = openPool(env.DATABASE_URL as string, { max: 2 });
    await migrate(pool, { only: 'keys' });
    clock = fakeClock();
    start = clock.now();
    issuer = await createTestIssuer({ audience: AUDIENCE, issuer: ISSUER, kid: 'acme-1', now: clock.now });
    await issuer.listen();
    await gateway(async (verifier) => {
      await verifier.verify(await issuer.token());
      // key_used_early: a new key signing 5 minutes after it appeared.
      const next = await issuer.addKey({ kid: 'next' });
      clock.advance(5 * MINUTE);
      await verifier.verify(await issuer.token(undefined, undefined, { key: next }));
      // key_withdrawn: that key taken out while the token it verified is valid.
      issuer.unpublish('next');
      await verifier.refresh(ISSUER);
    });
  });

  afterAll(async () => {
    await pool?.end();
    await issuer?.close();
  });

  it('exits 1 saying to migrate when the table is missing', async () => {
    const migrated = env;
    env = { DATABASE_URL: (await createTestDatabase('keys_status_empty')).url };
    try {
      const result = await cli('keys', 'status');
      expect(result.code).toBe(EXIT.failed);
      expect(result.err).toContain('run "paygate-auth migrate" first');
    } finally {
      env = migrated;
    }
  });

  it('says when nothing is recorded for an issuer', async () => {
    const result = await cli('keys', 'status', 'https://nobody.test');
    expect(result).toEqual({ code: EXIT.ok, out: 'No key history recorded for issuer "https://nobody.test".\n', err: '' });
  });

  it('names the registered issuer a trailing slash away when nothing is recorded for the one given', async () => {
    const migrated = env;
    env = { DATABASE_URL: (await createTestDatabase('keys_status_registry')).url };
    const registryPool = openPool(env.DATABASE_URL as string, { max: 1 });
    try {
      await migrate(registryPool, { only: ['registry', 'keys'] });
      await addIssuer(registryPool, { issuer: ISSUER, jwksUri: 'https://acme.test/jwks.json', products: ['acme'] }, { by: 'test' });
      const result = await cli('keys', 'status', `${ISSUER}/`);
      expect(result.code).toBe(EXIT.ok);
      expect(result.out).toContain(`No key history recorded for issuer "${ISSUER}/"`);
      expect(result.out).toContain(`the registry has "${ISSUER}" (a trailing slash): give that`);
    } finally {
      env = migrated;
      await registryPool.end();
    }
  });

  it('shows all three breaches, and a restart does not reset first-seen', async () => {
    // A restarted instance, 4 days on, still signing with the first key: key_rotation_overdue.
    clock.advance(4 * DAY);
    await gateway(async (verifier) => {
      await verifier.verify(await issuer.token());
    });
    const result = await cli('keys', 'status', ISSUER, '--now', new Date(clock.now()).toISOString());
    expect(result.code).toBe(EXIT.ok);
    expect(result.out.split('\n')[0]).toBe(`Issuer "${ISSUER}"`);
    const first = block(result.out, 'acme-1');
    expect(first).toContain(`first seen    ${new Date(start).toISOString().replace('.000', '')}, age 4 d 5 min`);
    expect(first).toContain('breaches      "key_rotation_overdue"');
    expect(first).toContain('withdrawn     no (still published)');
    const next = block(result.out, 'next');
    expect(next).toContain('breaches      "key_used_early", "key_withdrawn"');
    expect(next).toMatch(/withdrawn {5}\d{4}-\d\d-\d\dT[\d:]+Z \(4 d ago\)/);
    expect(next).toContain('published     after ');
    expect(result.out).toContain('2 keys, 3 breaches.');
  });

  it('gives the same facts as JSON with --json', async () => {
    const result = await cli('keys', 'status', '--json');
    expect(result.code).toBe(EXIT.ok);
    const { keys } = JSON.parse(result.out) as { keys: KeyHistoryEntry[] };
    expect(keys.map((key) => [key.kid, key.firstSeen === start, key.breaches])).toEqual([
      ['acme-1', true, ['key_rotation_overdue']],
      ['next', false, ['key_used_early', 'key_withdrawn']],
    ]);
  });

  it('escapes what the database holds onto one line, and shows one issuer alone', async () => {
    const hostile = 'https://evil.test/\n\u001b[31m\u202e';
    await gateway(async (verifier) => {
      verifier.mergeKeyHistory([
        {
          issuer: hostile,
          kid: 'k\r\n"x"',
          firstSeen: start,
          publishedAfter: null,
          firstUsed: null,
          lastUsed: null,
          latestExpiry: null,
          withdrawn: null,
          breaches: [],
        },
      ]);
    });
    const result = await cli('keys', 'status', hostile);
    expect(result.code).toBe(EXIT.ok);
    expect(result.out).toContain('Issuer "https://evil.test/\\u000a\\u001b[31m\\u202e"');
    expect(result.out).toContain('  kid "k\\u000d\\u000a\\"x\\""');
    expect(result.out).not.toMatch(/[\u001b\u202e\r]/);
    expect(result.out).not.toContain('acme-1');
    expect(result.out.split('\n')).toHaveLength(11);
  });
});
