/**
 * The issuer registry kept in PostgreSQL, changed by an operator with the command line
 * (`npx paygate-auth issuers …`) while two example gateway processes run on it: each change
 * reaches both within a second with no restart, a JWKS the verifier would not use is refused
 * before anything is written, the database stopped leaves both verifying with the registry they
 * hold, and the audit trail keeps every change. The onboarding walkthrough runs the built command
 * line, a process per command as an operator's shell does; the other tests run its commands in
 * this process (`runCli` with the commands the built one has), which spares a Node start-up and
 * a load of the package per command.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands.js';
import { runCli } from '../../src/cli/run-cli.js';
import { readIssuerChanges, readIssuers } from '../../src/postgres/index.js';
import { type JwksServer, type TestIssuer, type TestIssuerOptions, createTestIssuer, serveJwks } from '../../src/testing/index.js';
import { captureIo } from '../cli/cli-io.js';
import { LOADED_MARGIN_MS, PATIENCE_MS } from '../support/loaded-machine.js';
import { eventually } from './eventually.js';
import {
  type Answer,
  type CliRun,
  type Gateway,
  info,
  paygateAuth,
  requireBuild,
  root,
  startGateway,
  stopProcess,
} from './gateway-processes.js';
import { type PgServer, openPool, skipWithoutPostgres, startPostgres } from './pg-server.js';

const SKIP = skipWithoutPostgres('test/postgres/registry-cluster.test.ts');
/** The example gateway's audience and its demo issuer, seeded into the empty table. */
const AUDIENCE = 'https://payments.example';
const DEMO_ISSUER = 'https://auth.demo-integration.example';
/** How often each instance re-reads the table besides notifications: short, so a restart is seen soon. */
const REGISTRY_POLL_MS = 250;
/** How often each instance merges its key history into the table: short, so `keys status` sees it soon. */
const FLUSH_MS = 200;
/** The start of the line an instance logs when it keeps its registry because the database cannot be read. */
const STALE = 'paygate-auth/postgres: issuer registry: the database cannot be read';

let server: PgServer;
let databaseUrl: string;
let stateDir: string;
let sql: pg.Pool;
let a: Gateway;
let b: Gateway;
const children: ChildProcess[] = [];
const issuers: TestIssuer[] = [];
const servers: JwksServer[] = [];
const directories: string[] = [];

/** A test integration of product `product` for the example's audience, its JWKS served on 127.0.0.1. */
async function integration(product: string, options: TestIssuerOptions = {}): Promise<TestIssuer> {
  const issuer = await createTestIssuer({
    issuer: `https://auth.${product}.example`,
    product,
    audience: AUDIENCE,
    lifetime: 3600,
    ...options,
  });
  issuers.push(issuer);
  await issuer.listen();
  return issuer;
}

/** Runs `paygate-auth …` on the database in this process; resolves however it ends. */
async function operator(args: readonly string[]): Promise<CliRun> {
  const io = { ...captureIo(), env: { DATABASE_URL: databaseUrl } };
  const code = await runCli(args, io, COMMANDS);
  return { code, stdout: io.out(), stderr: io.err() };
}

/** Runs `paygate-auth issuers …`; its output, once it exits 0. */
async function issuersCommand(...args: string[]): Promise<string> {
  const ran = await operator(['issuers', ...args]);
  if (ran.code !== 0) throw new Error(`issuers ${args.join(' ')} exited ${ran.code}: ${ran.stderr}`);
  return ran.stdout;
}

/** The options naming `issuer`'s entry as it is served now: its iss, JWKS address and product. */
function entryOptions(issuer: TestIssuer): string[] {
  return ['--issuer', issuer.issuer, '--jwks-uri', issuer.jwksUri, '--product', issuer.product];
}

/** `issuers add` for `issuer`'s entry, by `by`. */
function add(issuer: TestIssuer, by: string, ...more: string[]): Promise<string> {
  return issuersCommand('add', ...entryOptions(issuer), '--by', by, ...more);
}

/** `issuers add` for `issuer`'s entry, however it ends. */
function tryAdd(issuer: TestIssuer): Promise<CliRun> {
  return operator(['issuers', 'add', ...entryOptions(issuer)]);
}

/** The answers of both instances to `GET /info/` with `bearer`. */
function onBoth(bearer: string): Promise<Answer[]> {
  return Promise.all([info(a, bearer), info(b, bearer)]);
}

/** What both instances' answers to one token must be. */
type Expectation = (answers: readonly Answer[]) => boolean;

const accepted: Expectation = (answers) => answers.every((got) => got.status === 200);
const refusedWith =
  (code: string): Expectation =>
  (answers) =>
    answers.every((got) => got.status === 401 && got.body.code === code);

/** Verifies `bearer` three times on both instances, so that its result is cached (the second use caches it). */
async function cacheOnBoth(bearer: string): Promise<void> {
  for (let round = 0; round < 3; round++) expect(accepted(await onBoth(bearer))).toBe(true);
}

/** Waits until both instances answer each token as expected, within a second from now (and the loaded machine's margin). */
async function withinASecond(what: string, ...expectations: readonly (readonly [bearer: string, expected: Expectation])[]): Promise<void> {
  const met = async ([bearer, expected]: readonly [string, Expectation]) => expected(await onBoth(bearer));
  await eventually(what, async () => (await Promise.all(expectations.map(met))).every(Boolean), 1000 + LOADED_MARGIN_MS);
}

/** The shell lines of the onboarding walkthrough of docs/postgres.md, in order. */
function walkthrough(): string[] {
  const page = readFileSync(join(root, 'docs', 'postgres.md'), 'utf8');
  const start = page.indexOf('\n## Onboarding an integration, step by step\n');
  const end = page.indexOf('\n## ', start + 1);
  const section = page.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/^ *```sh\n([\s\S]*?)^ *```$/gm)].flatMap((block) =>
    (block[1] ?? '')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== ''),
  );
}

/** Where the walkthrough's product publishes its JWKS; the test serves the file there instead. */
const WALKTHROUGH_JWKS = 'http://127.0.0.1:8400/acme-jwks.json';

describe.skipIf(SKIP)('the issuer registry in PostgreSQL, changed while two example gateways run', () => {
  beforeAll(async () => {
    requireBuild();
    stateDir = mkdtempSync(join(tmpdir(), 'paygate-registry-'));
    server = await startPostgres();
    databaseUrl = await server.createDatabase('registry');
    sql = openPool(databaseUrl, { max: 2 });
    const env = {
      DATABASE_URL: databaseUrl,
      PAYGATE_EXAMPLE_STATE_DIR: stateDir,
      PAYGATE_REGISTRY_POLL_MS: String(REGISTRY_POLL_MS),
      PAYGATE_KEY_HISTORY_FLUSH_MS: String(FLUSH_MS),
    };
    [a, b] = await Promise.all([startGateway(env, children), startGateway(env, children)]);
  }, 4 * PATIENCE_MS);

  afterAll(async () => {
    await Promise.all(children.map((child) => stopProcess(child)));
    await Promise.all([...issuers, ...servers].map((server) => server.close()));
    for (const directory of directories) rmSync(directory, { recursive: true, force: true });
    await sql?.end();
    await server?.dispose();
    if (stateDir !== undefined) rmSync(stateDir, { recursive: true, force: true });
  });

  it('seeds the empty table with the demo issuer once, by example-gateway, though both instances started at once', async () => {
    const changes = await readIssuerChanges(sql, { issuer: DEMO_ISSUER });
    expect(changes.map(({ action, actor }) => ({ action, actor }))).toEqual([{ action: 'add', actor: 'example-gateway' }]);
  });

  it('says in its banner that the registry comes from PostgreSQL', () => {
    for (const gateway of [a, b]) expect(gateway.output).toMatch(/\n {2}registry {3}PostgreSQL \(1 issuer/);
  });

  it('issuers add makes both instances accept the new issuer tokens within a second, with no restart', async () => {
    const newcomer = await integration('newcomer');
    const bearer = await newcomer.token();
    expect(refusedWith('unknown_issuer')(await onBoth(bearer))).toBe(true);
    await add(newcomer, 'alice');
    await withinASecond('both accept the new issuer', [bearer, accepted]);
  });

  it('issuers update with new tenants makes both accept them and refuse a tenant taken out within a second, cached results included', async () => {
    const clinics = await integration('clinics');
    const tenant = (id: string) => `ern:clinics/tenants/${id}`;
    await add(clinics, 'alice', '--tenant', 't-1');
    const [takenOut, added, alsoAdded] = await Promise.all([
      clinics.token({ tenant_ern: tenant('t-1') }),
      clinics.token({ tenant_ern: tenant('t-2') }),
      clinics.token({ tenant_ern: tenant('t-3') }),
    ]);
    await withinASecond('both accept t-1', [takenOut, accepted]);
    expect(refusedWith('tenant_not_allowed')(await onBoth(added))).toBe(true);
    await cacheOnBoth(takenOut);
    await issuersCommand('update', ...entryOptions(clinics), '--tenant', 't-2', '--tenant', 't-3', '--by', 'bob');
    await withinASecond(
      'both accept t-2 and t-3, added, and refuse t-1, taken out',
      [added, accepted],
      [alsoAdded, accepted],
      [takenOut, refusedWith('tenant_not_allowed')],
    );
  });

  it('issuers remove makes both refuse the issuer tokens within a second, cached results included', async () => {
    const leaving = await integration('leaving');
    await add(leaving, 'alice');
    const bearer = await leaving.token();
    await withinASecond('both accept the issuer', [bearer, accepted]);
    await cacheOnBoth(bearer);
    await issuersCommand('remove', leaving.issuer, '--by', 'carol');
    await withinASecond('both refuse the issuer removed', [bearer, refusedWith('unknown_issuer')]);
  });

  it('keys status shows the key of an issuer added live, first used on the instances that verified its tokens', async () => {
    const keyed = await integration('keyed');
    await add(keyed, 'alice');
    const bearer = await keyed.token();
    await withinASecond('both accept the new issuer', [bearer, accepted]);
    const status = async (): Promise<{ kid: string; firstUsed: number | null }[]> => {
      const ran = await operator(['keys', 'status', keyed.issuer, '--json']);
      return ran.code === 0 ? (JSON.parse(ran.stdout) as { keys: { kid: string; firstUsed: number | null }[] }).keys : [];
    };
    await eventually('the key history reaches the table', async () => (await status()).some((key) => key.firstUsed !== null));
    expect((await status()).map((key) => key.kid)).toEqual([keyed.signingKey.kid]);
  });

  it('issuers add refuses a JWKS whose only key is 1024 bits, naming the key and its size, and writes nothing', async () => {
    const weak = await integration('weak', { kid: 'k-strong' });
    await weak.addKey({ kid: 'k-weak', modulusLength: 1024 });
    weak.unpublish('k-strong');
    const ran = await tryAdd(weak);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain('"k-weak" modulus of 1024 bits, under 2048');
    expect((await readIssuers(sql)).map((record) => record.entry.issuer)).not.toContain(weak.issuer);
  });

  it('issuers add refuses a JWKS that lists no key, saying so, and writes nothing', async () => {
    const empty = await integration('empty');
    empty.unpublish(empty.signingKey.kid);
    const ran = await tryAdd(empty);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain('it lists no key');
    expect((await readIssuers(sql)).map((record) => record.entry.issuer)).not.toContain(empty.issuer);
  });

  it('issuers history lists each change of an issuer with the entry before and after, the time and the actor', async () => {
    const audited = await integration('audited');
    const before = new Date();
    await add(audited, 'alice');
    await issuersCommand('update', ...entryOptions(audited), '--tenant', 't-1', '--by', 'bob');
    await issuersCommand('remove', audited.issuer, '--by', 'carol');
    const history = JSON.parse(await issuersCommand('history', audited.issuer, '--json')) as {
      action: string;
      before: Record<string, unknown> | null;
      after: Record<string, unknown> | null;
      at: string;
      actor: string;
    }[];
    const first = { issuer: audited.issuer, jwksUri: audited.jwksUri, products: ['audited'] };
    const second = { ...first, tenants: ['t-1'] };
    expect(history.map(({ action, before, after, actor }) => ({ action, before, after, actor }))).toEqual([
      { action: 'add', before: null, after: first, actor: 'alice' },
      { action: 'update', before: first, after: second, actor: 'bob' },
      { action: 'remove', before: second, after: null, actor: 'carol' },
    ]);
    const times = history.map((change) => Date.parse(change.at));
    expect([...times].sort((x, y) => x - y)).toEqual(times);
    for (const time of times) expect(time).toBeGreaterThanOrEqual(before.getTime() - 1000);
    for (const time of times) expect(time).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it('onboards an integration as docs/postgres.md walks it, from issuers add to the product first GET /info/ on both instances', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'paygate-onboarding-'));
    directories.push(directory);
    const published = await serveJwks(() => JSON.parse(readFileSync(join(directory, 'acme-jwks.json'), 'utf8')), {
      path: '/acme-jwks.json',
    });
    servers.push(published);
    const gateways: Record<string, Gateway> = { '3001': a, '3002': b };
    const ran: string[] = [];
    let token = '';
    for (const line of walkthrough()) {
      const command = /^(TOKEN=\$\()?npx paygate-auth (.+?)\)?$/.exec(line);
      const request = /^curl -s localhost:(3001|3002)\/info\/ -H "Authorization: Bearer \$TOKEN" +# (\d{3})(?: (\w+))?$/.exec(line);
      if (command !== null) {
        const args = (command[2] ?? '').split(/ +/).map((arg) => (arg === WALKTHROUGH_JWKS ? published.url : arg));
        const result = await paygateAuth(databaseUrl, args, directory);
        expect(result.code, `${line}\n${result.stderr}`).toBe(0);
        if (command[1] !== undefined) token = result.stdout.trim();
        ran.push(args.slice(0, 2).join(' '));
      } else if (request !== null) {
        const [, port = '', status, code] = request;
        const gateway = gateways[port] as Gateway;
        const expected = (got: Answer) => got.status === Number(status) && (code === undefined || got.body.code === code);
        await eventually(`${line} answers as its comment says`, async () => expected(await info(gateway, token)));
        ran.push(`GET /info/ ${status}`);
      } else if (!line.startsWith('python3 -m http.server ')) {
        throw new Error(`the walkthrough has a line this test does not run: ${line}`);
      }
    }
    expect(ran.slice(0, 6)).toEqual(['keys generate', 'issuers add', 'issuers list', 'token sign', 'GET /info/ 200', 'GET /info/ 200']);
  });

  it('keeps verifying on both with the registry held while the database is stopped; a change made after its restart reaches both', async () => {
    const staying = await integration('staying');
    await add(staying, 'alice');
    const bearer = await staying.token();
    await withinASecond('both accept the issuer', [bearer, accepted]);
    await server.stop();
    try {
      // A token never seen (no cached result), of an issuer whose keys are held: verified from the registry held.
      expect(accepted(await onBoth(await staying.token()))).toBe(true);
      await eventually('both report the registry stale', () => [a, b].every((gateway) => gateway.output.includes(STALE)));
      expect(accepted(await onBoth(await staying.token()))).toBe(true);
    } finally {
      await server.start();
    }
    const later = await integration('later');
    await add(later, 'alice');
    await eventually('both accept the issuer added after the restart', async () => accepted(await onBoth(await later.token())));
  });
});
