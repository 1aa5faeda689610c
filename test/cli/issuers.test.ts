/**
 * `paygate-auth issuers …` through the dispatcher: option mistakes without a database, then every
 * sub-command on a real PostgreSQL, with the entries' JWKS served on 127.0.0.1.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createIssuersCommands } from '../../src/cli/issuers-command.js';
import { migrateCommand } from '../../src/cli/migrate-command.js';
import { EXIT, runCli } from '../../src/cli/run-cli.js';
import type { IssuerEntry } from '../../src/index.js';
import { TABLES } from '../../src/postgres/schema-names.js';
import { type JwksServer, type TestIssuer, createTestIssuer, generateTestKey, serveJwks } from '../../src/testing/index.js';
import { createTestDatabase, skipWithoutPostgres } from '../postgres/pg-server.js';
import { LOADED_MARGIN_MS } from '../support/loaded-machine.js';
import { startProxy } from '../postgres/tcp-proxy.js';
import { stubResolver } from '../support/resolver-stub.js';
import { captureIo } from './cli-io.js';

const SKIP = skipWithoutPostgres('test/cli/issuers.test.ts');
const AUD = 'https://payments.example';
const OS_USER = 'os-operator';
const NAMES = ['add', 'update', 'remove', 'list', 'show', 'import', 'history'];

let stdin = '';
const COMMANDS = [migrateCommand, ...createIssuersCommands({ user: () => OS_USER, readStdin: async () => stdin })];

let env: Record<string, string> = {};

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = { ...captureIo(), env };
  const code = await runCli(args, io, COMMANDS);
  return { code, out: io.out(), err: io.err() };
}

describe('paygate-auth issuers without a database', () => {
  it.each(NAMES)('issuers %s --help prints its usage and DATABASE_URL, and exits 0', async (name) => {
    const { code, out } = await cli('issuers', name, '--help');
    expect(code).toBe(EXIT.ok);
    expect(out).toContain(`Usage: paygate-auth issuers ${name}`);
    expect(out).toContain('DATABASE_URL');
  });

  const ADD = ['issuers', 'add', '--issuer', 'https://a.example', '--jwks-uri', 'https://a.example/jwks.json', '--product', 'acme'];
  it.each([
    ['an option is unknown', [...ADD, '--frobnicate'], 'unknown option "--frobnicate"'],
    ['--product is missing', ADD.slice(0, 6), '--product is required'],
    ['--issuer is missing', ['issuers', 'add', '--jwks-uri', 'https://a.example/jwks.json', '--product', 'acme'], '--issuer is required'],
    ['--token is given without --audience', [...ADD, '--token', '-'], '--audience is required with --token'],
    ['--subject-must-equal-issuer is not a boolean', [...ADD, '--subject-must-equal-issuer', 'yes'], 'must be true or false'],
    ['--max-token-lifetime is not whole seconds', [...ADD, '--max-token-lifetime', '1.5'], '--max-token-lifetime must be a whole number'],
    ['--entry is combined with a field', ['issuers', 'add', '--entry', 'x.json', '--product', 'acme'], 'cannot be combined with --entry'],
    ['the jwksUri is plain http off loopback', [...ADD.slice(0, 4), '--jwks-uri', 'http://a.example/j', '--product', 'acme'], '.jwksUri'],
    ['the product is not an ERN name', [...ADD.slice(0, 6), '--product', 'ac me'], '.products'],
    [
      'the jwksUri is the cloud metadata address',
      [...ADD.slice(0, 4), '--jwks-uri', 'https://169.254.169.254/latest/', '--product', 'acme'],
      '(169.254.169.254/32; rule metadata)',
    ],
    [
      'the jwksUri is a private address not allowed',
      [...ADD.slice(0, 4), '--jwks-uri', 'https://10.0.0.7/j', '--product', 'acme', '--allow-jwks-host', '10.0.0.8'],
      'rule private',
    ],
    ['--allow-jwks-host is not a bare host', [...ADD, '--allow-jwks-host', '10.0.0.7:443'], '--allow-jwks-host must be a bare host'],
    [
      'the issuer is longer than the registry table holds',
      [...ADD.slice(0, 3), `https://a.example/${'i'.repeat(2048)}`, ...ADD.slice(4)],
      '--issuer must be at most 2048 characters',
    ],
    ['update names no issuer', ['issuers', 'update', '--tenant', 't-1'], '--issuer is required'],
    ['remove names no issuer', ['issuers', 'remove'], '--issuer is required'],
    ['import names no file', ['issuers', 'import'], 'give the file of entries'],
    ['list gets an argument', ['issuers', 'list', 'all'], 'unexpected argument "all"'],
  ])('exits 2 naming the mistake when %s, before any connection', async (_case, args, message) => {
    env = { DATABASE_URL: 'postgres://x@127.0.0.1:1/x' };
    const { code, err } = await cli(...args);
    expect(code).toBe(EXIT.usage);
    expect(err).toContain(message);
  });

  it.each([
    ['--product', ADD.slice(0, 6), '--product acme'],
    ['--audience (with --token)', [...ADD, '--token', '-'], '--audience https://'],
  ])('takes issuers add without %s as a usage mistake, naming none found and an example', async (option, args, example) => {
    env = { DATABASE_URL: 'postgres://x@127.0.0.1:1/x' };
    const { code, err } = await cli(...args);
    expect(code).toBe(EXIT.usage);
    expect(err).toContain(`${option.split(' ')[0]} is required`);
    expect(err).toContain('got none');
    expect(err).toContain(example);
  });

  it('exits 1 naming the host, never the password, for an unreachable --database-url', async () => {
    env = {};
    const { code, err } = await cli('issuers', 'list', '--database-url', 'postgres://gateway:s3cret@127.0.0.1:1/payments');
    expect(code).toBe(EXIT.failed);
    expect(err).toContain('cannot connect to the database at 127.0.0.1:1/payments');
    expect(err).not.toContain('s3cret');
  });
});

let jwks: JwksServer;
let served: unknown;
let issuer: TestIssuer;
let directory: string;

/** An entry of issuer `name` whose JWKS is the one served. */
function entryOf(name: string, extra: Partial<IssuerEntry> = {}): IssuerEntry {
  return { issuer: `https://${name}.example`, jwksUri: jwks.url, products: ['acme'], ...extra };
}

function addArgs(name: string, ...extra: string[]): string[] {
  return ['issuers', 'add', '--issuer', `https://${name}.example`, '--jwks-uri', jwks.url, '--product', 'acme', ...extra];
}

interface JsonChange {
  id: number;
  issuer: string;
  action: string;
  before: IssuerEntry | null;
  after: IssuerEntry | null;
  at: string;
  actor: string;
}

async function history(issuerName?: string): Promise<JsonChange[]> {
  const { out } = await cli('issuers', 'history', ...(issuerName === undefined ? [] : [issuerName]), '--json');
  return JSON.parse(out) as JsonChange[];
}

async function listed(): Promise<string[]> {
  const { out } = await cli('issuers', 'list', '--json');
  return (JSON.parse(out) as { entry: IssuerEntry }[]).map((record) => record.entry.issuer);
}

describe.skipIf(SKIP)('paygate-auth issuers on a real database', () => {
  beforeAll(async () => {
    [env, jwks, directory] = await Promise.all([
      createTestDatabase('issuers_cli').then(({ url }) => ({ DATABASE_URL: url })),
      serveJwks(() => served),
      mkdtemp(join(tmpdir(), 'paygate-issuers-')),
    ]);
    issuer = await createTestIssuer({ issuer: 'https://signed.example', audience: AUD, product: 'acme', jwksUri: jwks.url });
    served = issuer.jwks;
    expect((await cli('migrate', '--only', 'registry')).code).toBe(EXIT.ok);
  });

  afterAll(async () => {
    await Promise.all([jwks?.close(), directory === undefined ? undefined : rm(directory, { recursive: true })]);
  });

  it('adds an issuer whose JWKS the verifier uses, as the OS user, and lists it', async () => {
    const { code, out } = await cli(...addArgs('alpha', '--tenant', 't-1', '--tenant', 't-2'));
    expect(code).toBe(EXIT.ok);
    expect(out).toMatch(/^✓ jwks .*: 1 usable key\(s\), kids "test-key"$/m);
    expect(out).toContain('Added "https://alpha.example"');
    const [change] = await history('https://alpha.example');
    expect(change).toMatchObject({ action: 'add', before: null, after: entryOf('alpha', { tenants: ['t-1', 't-2'] }), actor: OS_USER });
  });

  it('refuses an issuer whose JWKS host goes silent within --jwks-timeout, naming the host, the bound and the option', async () => {
    const proxy = await startProxy(Number(new URL(jwks.url).port));
    proxy.silence();
    try {
      const silentUri = `http://127.0.0.1:${proxy.port}${new URL(jwks.url).pathname}`;
      const started = performance.now();
      const { code, err } = await cli(
        'issuers',
        'add',
        '--issuer',
        'https://silent.example',
        '--jwks-uri',
        silentUri,
        '--product',
        'acme',
        '--jwks-timeout',
        '1',
      );
      const elapsed = performance.now() - started;
      expect(code).toBe(EXIT.failed);
      expect(err).toContain(`127.0.0.1:${proxy.port}`);
      expect(err).toContain('within 1 s');
      expect(err).toContain('--jwks-timeout');
      // The bound is 1 s; the margin keeps it below the gateway's default of 5 s.
      expect(elapsed).toBeLessThan(1000 + LOADED_MARGIN_MS);
      expect(await history('https://silent.example')).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it('refuses to add an issuer registered already (exit 1), writing nothing', async () => {
    await cli(...addArgs('twice'));
    const { code, err } = await cli(...addArgs('twice', '--by', 'bob'));
    expect(code).toBe(EXIT.failed);
    expect(err).toContain('is registered already');
    expect(await history('https://twice.example')).toHaveLength(1);
  });

  it('refuses an add of the entry registered already as a repeat, before downloading the JWKS (exit 1)', async () => {
    await cli(...addArgs('hotel'));
    const before = jwks.requests;
    const again = await cli(...addArgs('hotel'));
    expect(again.code).toBe(EXIT.failed);
    expect(again.err).toMatch(
      /issuer "https:\/\/hotel\.example" is registered already \(change #\d+\), with this same entry: nothing to do/,
    );
    expect(jwks.requests).toBe(before);
  });

  it('refuses an add of another entry for an issuer registered already, naming how they differ and "issuers update"', async () => {
    await cli(...addArgs('india'));
    const other = await cli(...addArgs('india', '--tenant', 't-3'));
    expect(other.code).toBe(EXIT.failed);
    expect(other.err).toContain('with another entry (tenants absent → ["t-3"]): give the change to "paygate-auth issuers update"');
    expect(await history('https://india.example')).toHaveLength(1);
  });

  it('refuses a JWKS whose only key is 1024 bits, naming the kid and the rule, and writes nothing', async () => {
    served = { keys: [(await generateTestKey({ kid: 'k-weak', modulusLength: 1024 })).publicJwk] };
    try {
      const { code, out, err } = await cli(...addArgs('weak'));
      expect(code).toBe(EXIT.failed);
      expect(out).toMatch(/^✗ jwks .*0 usable key\(s\); 1 entry ignored: "k-weak" modulus of 1024 bits, under 2048$/m);
      expect(err).toContain(
        'refused, nothing written: no usable key in the JWKS: 1 entry ignored: "k-weak" modulus of 1024 bits, under 2048',
      );
      expect(await listed()).not.toContain('https://weak.example');
      expect(await history('https://weak.example')).toEqual([]);
    } finally {
      served = issuer.jwks;
    }
  });

  it('refuses a JWKS that lists no key', async () => {
    served = { keys: [] };
    try {
      const { code, err } = await cli(...addArgs('empty'));
      expect(code).toBe(EXIT.failed);
      expect(err).toContain('no usable key in the JWKS: it lists no key');
      expect(await listed()).not.toContain('https://empty.example');
    } finally {
      served = issuer.jwks;
    }
  });

  it('--force adds an issuer whose JWKS has no usable key, saying why it would have refused', async () => {
    served = { keys: [(await generateTestKey({ kid: 'k-weak', modulusLength: 1024 })).publicJwk] };
    try {
      const { code, out } = await cli(...addArgs('forced', '--force'));
      expect(code).toBe(EXIT.ok);
      expect(out).toContain(
        '--force: no usable key in the JWKS: 1 entry ignored: "k-weak" modulus of 1024 bits, under 2048; written anyway',
      );
      expect(await listed()).toContain('https://forced.example');
    } finally {
      served = issuer.jwks;
    }
  });

  it('refuses, even with --force, an issuer whose JWKS name resolves to a private address (resolver stub), writing nothing', async () => {
    stubResolver().set('jwks.rebind.example', ['10.0.0.7']);
    try {
      const args = ['issuers', 'add', '--issuer', 'https://rebind.example', '--jwks-uri', 'https://jwks.rebind.example/j.json'];
      const { code, err } = await cli(...args, '--product', 'acme', '--force');
      expect(code).toBe(EXIT.failed);
      expect(err).toContain('refused, nothing written: The JWKS host "jwks.rebind.example" resolves to "10.0.0.7"');
      expect(err).toContain('rule private');
      expect(await listed()).not.toContain('https://rebind.example');
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('--allow-jwks-host registers a JWKS at a loopback address over https (forced past its failed download)', async () => {
    const jwksUri = jwks.url.replace('http:', 'https:');
    const args = ['issuers', 'add', '--issuer', 'https://allowed.example', '--jwks-uri', jwksUri, '--product', 'acme', '--force'];
    expect((await cli(...args)).code).toBe(EXIT.usage);
    const { code, out } = await cli(...args, '--allow-jwks-host', '127.0.0.1');
    expect(code).toBe(EXIT.ok);
    expect(out).toContain('--force: the JWKS cannot be used');
    expect(await listed()).toContain('https://allowed.example');
  });

  it('adds an issuer whose sample token (a file) verifies as the gateway would', async () => {
    const file = join(directory, 'token.txt');
    await writeFile(file, `Bearer ${await issuer.token()}\n`);
    const { code, out } = await cli(...addArgs('signed', '--token', file, '--audience', AUD));
    expect(code).toBe(EXIT.ok);
    expect(out).toContain('✓ signature');
    expect(out).toContain('✓ the sample token verifies');
  });

  it("refuses an issuer whose sample token (standard input) is rejected, with the verifier's code, writing nothing", async () => {
    const other = await createTestIssuer({
      issuer: 'https://unsigned.example',
      audience: AUD,
      product: 'acme',
      jwksUri: jwks.url,
      kid: 'other',
    });
    stdin = await other.token();
    const { code, err } = await cli(...addArgs('unsigned', '--token', '-', '--audience', AUD));
    expect(code).toBe(EXIT.failed);
    expect(err).toContain('the sample token is rejected: unknown_key');
    expect(await listed()).not.toContain('https://unsigned.example');
  });

  it("updates an issuer's tenants, keeping its other fields, and the audit trail says before → after", async () => {
    await cli(...addArgs('beta', '--tenant', 't-1', '--max-token-lifetime', '600'));
    const { code } = await cli('issuers', 'update', '--issuer', 'https://beta.example', '--tenant', 't-2,t-3', '--by', 'carol');
    expect(code).toBe(EXIT.ok);
    const changes = await history('https://beta.example');
    expect(changes.map((change) => change.action)).toEqual(['add', 'update']);
    expect(changes[1]).toMatchObject({
      before: entryOf('beta', { tenants: ['t-1'], maxTokenLifetime: 600 }),
      after: entryOf('beta', { tenants: ['t-2', 't-3'], maxTokenLifetime: 600 }),
      actor: 'carol',
    });
    const { out } = await cli('issuers', 'history', 'https://beta.example');
    expect((await cli('issuers', 'history', 'https://beta.example')).out).toContain('maxTokenLifetime 600');
    expect(out).toMatch(
      /^#\d+ {2}\S+Z {2}update {2}"https:\/\/beta\.example" {2}by "carol" \(role "postgres"\): tenants \["t-1"\] → \["t-2", "t-3"\]$/m,
    );
  });

  it('refuses an update that changes nothing, and one of an issuer not registered', async () => {
    await cli(...addArgs('same'));
    expect(await cli('issuers', 'update', '--issuer', 'https://same.example', '--product', 'acme')).toMatchObject({
      code: EXIT.failed,
      err: expect.stringContaining('is registered with this entry already'),
    });
    expect(await cli('issuers', 'update', '--issuer', 'https://nobody.example', '--tenant', 't-1')).toMatchObject({
      code: EXIT.failed,
      err: expect.stringContaining('"https://nobody.example" is not registered'),
    });
  });

  it('updates from a whole --entry file, checking its new JWKS first', async () => {
    await cli(...addArgs('gamma', '--tenant', 't-1'));
    const file = join(directory, 'gamma.json');
    await writeFile(file, JSON.stringify(entryOf('gamma', { products: ['acme', 'beta'] })));
    served = { keys: [] };
    try {
      expect((await cli('issuers', 'update', '--entry', file)).code).toBe(EXIT.failed);
    } finally {
      served = issuer.jwks;
    }
    expect((await cli('issuers', 'update', '--entry', file)).code).toBe(EXIT.ok);
    const [, change] = await history('https://gamma.example');
    expect(change?.after).toEqual(entryOf('gamma', { products: ['acme', 'beta'] }));
  });

  it('refuses update --entry, writing nothing, when someone limits the issuer while its JWKS is checked', async () => {
    let during: (() => Promise<unknown>) | undefined;
    const racing = await serveJwks(() => served, {
      respond: async () => {
        const concurrent = during;
        during = undefined;
        await concurrent?.();
        return false;
      },
    });
    try {
      const lambda = { issuer: 'https://lambda.example', jwksUri: racing.url, products: ['acme'] };
      const file = join(directory, 'lambda.json');
      await writeFile(file, JSON.stringify(lambda));
      expect((await cli('issuers', 'add', '--entry', file)).code).toBe(EXIT.ok);
      await writeFile(file, JSON.stringify({ ...lambda, products: ['acme', 'beta'] }));
      during = () => cli('issuers', 'update', '--issuer', lambda.issuer, '--tenant', 't-limit', '--by', 'bob');
      expect(await cli('issuers', 'update', '--entry', file, '--by', 'alice')).toMatchObject({
        code: EXIT.failed,
        err: expect.stringContaining('"https://lambda.example" was changed by someone else since it was read'),
      });
      expect((await history(lambda.issuer)).map((change) => [change.action, change.actor, change.after?.tenants])).toEqual([
        ['add', OS_USER, undefined],
        ['update', 'bob', ['t-limit']],
      ]);
    } finally {
      await racing.close();
    }
  });

  it('refuses an update and an import made from a change the issuer has moved past (--unchanged-since), writing nothing', async () => {
    await cli(...addArgs('mu'));
    const listing = (await cli('issuers', 'list')).out;
    const since = /as of change #(\d+) /.exec(listing)?.[1] ?? '';
    expect(listing).toMatch(/^"https:\/\/mu\.example" .*, change #\d+$/m);
    expect((await cli('issuers', 'update', '--issuer', 'https://mu.example', '--tenant', 't-1', '--unchanged-since', since)).code).toBe(
      EXIT.ok,
    );
    const stale = await cli('issuers', 'update', '--issuer', 'https://mu.example', '--tenant', 't-2', '--unchanged-since', since);
    expect(stale).toMatchObject({ code: EXIT.failed, err: expect.stringContaining('was changed by someone else') });
    const file = join(directory, 'mu-registry.json');
    await writeFile(file, JSON.stringify([entryOf('nu'), entryOf('mu', { tenants: ['t-3'] })]));
    expect(await cli('issuers', 'import', file, '--unchanged-since', since)).toMatchObject({
      code: EXIT.failed,
      err: expect.stringContaining('"https://mu.example" was changed by someone else'),
    });
    expect(await listed()).not.toContain('https://nu.example');
    expect((await history('https://mu.example')).at(-1)?.after?.tenants).toEqual(['t-1']);
    expect((await cli('issuers', 'update', '--issuer', 'https://mu.example', '--unchanged-since', '1.5')).code).toBe(EXIT.usage);
  });

  it('removes an issuer without reading its JWKS; a second remove is refused', async () => {
    await cli(...addArgs('delta'));
    const before = jwks.requests;
    const removed = await cli('issuers', 'remove', 'https://delta.example', '--by', 'dave');
    expect(removed.code).toBe(EXIT.ok);
    expect(removed.out).toContain('Removed "https://delta.example"');
    expect(jwks.requests).toBe(before);
    expect(await listed()).not.toContain('https://delta.example');
    expect((await history('https://delta.example')).at(-1)).toMatchObject({ action: 'remove', after: null, actor: 'dave' });
    expect(await cli('issuers', 'remove', '--issuer', 'https://delta.example')).toMatchObject({
      code: EXIT.failed,
      err: expect.stringContaining('is not registered'),
    });
  });

  it('a second remove says the issuer was removed already, naming the change that did, and changes nothing (exit 1)', async () => {
    await cli(...addArgs('golf'));
    expect((await cli('issuers', 'remove', 'https://golf.example', '--by', 'gina')).code).toBe(EXIT.ok);
    const removal = (await history('https://golf.example')).at(-1) as JsonChange;
    const again = await cli('issuers', 'remove', 'https://golf.example');
    expect(again.code).toBe(EXIT.failed);
    expect(again.err).toContain(`it was removed already, by change #${removal.id} (${removal.at}, by "gina"`);
    expect((await history('https://golf.example')).at(-1)?.id).toBe(removal.id);
  });

  it('remove prints how to undo it: the entry removed, which "issuers add --entry" adds back as it was', async () => {
    await cli(...addArgs('echo', '--tenant', 't-9', '--max-token-lifetime', '600'));
    const removed = await cli('issuers', 'remove', 'https://echo.example');
    expect(removed.code).toBe(EXIT.ok);
    const undo = /^To undo: save the entry removed to a file and run "paygate-auth issuers add --entry <file>": (.*)$/m.exec(removed.out);
    expect(undo).not.toBeNull();
    const file = join(directory, 'echo-undo.json');
    await writeFile(file, (undo as RegExpExecArray)[1] as string);
    expect((await cli('issuers', 'add', '--entry', file)).code).toBe(EXIT.ok);
    expect((await history('https://echo.example')).at(-1)?.after).toEqual(entryOf('echo', { tenants: ['t-9'], maxTokenLifetime: 600 }));
  });

  it.each([
    ['remove', ['issuers', 'remove', 'https://delta.example']],
    ['import', ['issuers', 'import', 'no-need-to-exist.json']],
  ])('names --by, not the function option, when %s is given one too long (exit 2)', async (name, args) => {
    const file = join(directory, 'by-import.json');
    await writeFile(file, JSON.stringify([entryOf('kilo')]));
    const ran = await cli(...args.map((arg) => (arg === 'no-need-to-exist.json' ? file : arg)), '--by', 'x'.repeat(201));
    expect(ran.code).toBe(EXIT.usage);
    expect(ran.err).toContain(`paygate-auth issuers ${name}: --by must be 1 to 200 characters`);
    expect(ran.err).not.toMatch(/Issuers?: by /);
  });

  it('import names an issuer longer than the table holds by its place in the file, changing nothing (exit 2)', async () => {
    const file = join(directory, 'long-import.json');
    await writeFile(file, JSON.stringify([entryOf('lima'), { ...entryOf('mike'), issuer: `https://mike.example/${'i'.repeat(2048)}` }]));
    const ran = await cli('issuers', 'import', file);
    expect(ran.code).toBe(EXIT.usage);
    expect(ran.err).toMatch(/entries\[1\]\.issuer of ".*long-import\.json" must be at most 2048 characters/);
    expect(ran.err).not.toContain('importIssuers');
    expect(await history('https://lima.example')).toEqual([]);
  });

  it('add prints how to undo it: the remove command', async () => {
    expect((await cli(...addArgs('foxtrot'))).out).toContain('To undo: paygate-auth issuers remove https://foxtrot.example\n');
  });

  it('add prints an undo command that names an issuer longer than 80 characters whole', async () => {
    const issuer = `https://foxtrot.example/${'t'.repeat(100)}`;
    const added = await cli('issuers', 'add', '--issuer', issuer, '--jwks-uri', jwks.url, '--product', 'acme');
    expect(added.code).toBe(EXIT.ok);
    expect(added.out).toContain(`To undo: paygate-auth issuers remove ${issuer}\n`);
  });

  it.each([
    ['show', (name: string) => ['issuers', 'show', name]],
    ['update', (name: string) => ['issuers', 'update', '--issuer', name, '--tenant', 't-9']],
    ['remove', (name: string) => ['issuers', 'remove', name]],
  ])('issuers %s names the registered issuer a trailing slash away from the one given', async (_name, args) => {
    await cli(...addArgs('slash'));
    const { code, err } = await cli(...args('https://slash.example/'));
    expect(code).toBe(EXIT.failed);
    expect(err).toContain('issuer "https://slash.example/" is not registered');
    expect(err).toContain('the registry has "https://slash.example" (a trailing slash)');
    expect(await listed()).toContain('https://slash.example');
  });

  it('lists each issuer with products, tenants, jwksUri, and when and by whom it was added', async () => {
    const { code, out } = await cli('issuers', 'list');
    expect(code).toBe(EXIT.ok);
    const line = out.split('\n').find((text) => text.startsWith('"https://alpha.example"'));
    expect(line).toMatch(
      new RegExp(
        `^"https://alpha\\.example" {2}products \\["acme"\\] {2}tenants \\["t-1", "t-2"\\] {2}jwksUri "${jwks.url}" {2}added \\S+Z by "${OS_USER}", change #\\d+$`,
      ),
    );
  });

  it('shows one issuer: its record, whole entry and last changes; an unknown one exits 1', async () => {
    const { code, out } = await cli('issuers', 'show', 'https://beta.example');
    expect(code).toBe(EXIT.ok);
    expect(out).toContain('"https://beta.example"  products ["acme"]  tenants ["t-2", "t-3"]');
    const entry = out.split('\n').find((text) => text.startsWith('  entry: '));
    expect(JSON.parse(entry?.slice('  entry: '.length) ?? 'null')).toEqual(
      entryOf('beta', { tenants: ['t-2', 't-3'], maxTokenLifetime: 600 }),
    );
    expect(out).toMatch(/^Last 2 of 2 change\(s\):\n#\d+ .* add .*\n#\d+ .* update .*by "carol"/m);
    expect((await cli('issuers', 'show', '--issuer', 'https://nobody.example')).code).toBe(EXIT.failed);
  });

  it('prints the whole history in order, each change with time and actor', async () => {
    const changes = await history();
    expect(changes.map((change) => change.id)).toEqual([...changes.map((change) => change.id)].sort((a, b) => a - b));
    for (const change of changes) expect(Number.isNaN(Date.parse(change.at))).toBe(false);
    const { out } = await cli('issuers', 'history');
    expect(out.trim().split('\n')).toHaveLength(changes.length);
  });

  it('names in the history both the operator (--by) and the database role, and the role alone for a change made by hand', async () => {
    await cli(...addArgs('iota', '--by', 'erin'));
    const hand = new pg.Client({ connectionString: env.DATABASE_URL });
    await hand.connect();
    await hand.query(`DELETE FROM ${TABLES.issuers} WHERE issuer = 'https://iota.example'`).finally(() => hand.end());
    const lines = (await cli('issuers', 'history', 'https://iota.example')).out.trim().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(/ add {5}"https:\/\/iota\.example" {2}by "erin" \(role "postgres"\): /),
      expect.stringMatching(/ remove {2}"https:\/\/iota\.example" {2}by role "postgres": /),
    ]);
  });

  it('marks with ✗ a row every instance leaves out, naming the rule and the field', async () => {
    await cli(...addArgs('kappa'));
    const hand = new pg.Client({ connectionString: env.DATABASE_URL });
    await hand.connect();
    await hand
      .query(`UPDATE ${TABLES.issuers} SET entry = entry || '{"audience": "x"}' WHERE issuer = 'https://kappa.example'`)
      .finally(() => hand.end());
    // The row registered under --allow-jwks-host 127.0.0.1 above is left out too, unless allowed here.
    expect((await cli('issuers', 'list')).out).toMatch(/^2 row\(s\) left out by every instance/m);
    const { out } = await cli('issuers', 'list', '--allow-jwks-host', '127.0.0.1');
    expect(out).toMatch(
      /^✗ "https:\/\/kappa\.example" {2}left out by every instance \(invalid_entry\): .*\.audience is not an entry field/m,
    );
    expect(out).toMatch(/^1 row\(s\) left out by every instance/m);
    expect((await cli('issuers', 'remove', 'https://kappa.example')).code).toBe(EXIT.ok);
  });

  it('imports a file of entries in one go: new ones added, equal ones left, none removed', async () => {
    const file = join(directory, 'registry.json');
    await writeFile(file, JSON.stringify([entryOf('alpha', { tenants: ['t-1', 't-2'] }), entryOf('epsilon'), entryOf('zeta')]));
    const { code, out } = await cli('issuers', 'import', file, '--by', 'deploy');
    expect(code).toBe(EXIT.ok);
    expect(out).toContain('Imported 3 entries: 2 added, 0 updated, 1 unchanged.');
    expect(await listed()).toEqual(expect.arrayContaining(['https://alpha.example', 'https://epsilon.example', 'https://zeta.example']));
    expect((await history('https://zeta.example'))[0]).toMatchObject({ action: 'add', actor: 'deploy' });
  });

  it('imports an entry whose JWKS is at a private address only with --allow-jwks-host naming it', async () => {
    const file = join(directory, 'private-registry.json');
    await writeFile(file, JSON.stringify([entryOf('iota', { jwksUri: 'https://10.0.0.7/jwks.json' })]));
    const refused = await cli('issuers', 'import', file);
    expect(refused.code).toBe(EXIT.usage);
    expect(refused.err).toContain('(10.0.0.0/8; rule private)');
    expect((await cli('issuers', 'import', file, '--allow-jwks-host', '10.0.0.7')).code).toBe(EXIT.ok);
    expect(await listed()).toContain('https://iota.example');
  });

  it('updates an entry whose stored JWKS host was allowed, to a public one, without --allow-jwks-host', async () => {
    const { code } = await cli('issuers', 'update', '--issuer', 'https://iota.example', '--jwks-uri', jwks.url);
    expect(code).toBe(EXIT.ok);
    expect((await history('https://iota.example')).at(-1)).toMatchObject({ action: 'update', after: entryOf('iota') });
  });

  it('imports nothing from a file holding an entry the registry refuses, naming the field (exit 2)', async () => {
    const file = join(directory, 'bad-registry.json');
    await writeFile(file, JSON.stringify([entryOf('eta'), { ...entryOf('theta'), products: [] }]));
    const { code, err } = await cli('issuers', 'import', file);
    expect(code).toBe(EXIT.usage);
    expect(err).toContain('entries[1] ("https://theta.example").products');
    expect(await listed()).not.toContain('https://eta.example');
  });

  it('escapes what the database holds: an actor with bidi controls is printed as escapes', async () => {
    await cli(...addArgs('hostile', '--by', 'mallory\u202e\u2066txt'));
    const printed = [
      (await cli('issuers', 'list')).out,
      (await cli('issuers', 'history')).out,
      (await cli('issuers', 'list', '--json')).out,
    ];
    for (const text of printed) {
      expect(text).toContain('mallory\\u202e\\u2066txt');
      expect(text).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
    }
  });
});
