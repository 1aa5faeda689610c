/**
 * Two example gateway processes on one real PostgreSQL, the second reaching it through a TCP
 * proxy the test controls, and the built command line: `fleet` shows what each applied,
 * `--wait` returns once both have applied a change, and names the one behind a network gone
 * silent once its bound has passed.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestIssuer, createTestIssuer } from '../../src/testing/index.js';
import { eventually } from './eventually.js';
import { type Answer, type Gateway, info, paygateAuth, requireBuild, startGateway, stopProcess } from './gateway-processes.js';
import { createTestDatabase, skipWithoutPostgres } from './pg-server.js';
import { type TcpProxy, startProxy } from './tcp-proxy.js';

const SKIP = skipWithoutPostgres('test/postgres/fleet-cluster.test.ts');
const AUDIENCE = 'https://payments.example';
/**
 * Each instance's heartbeat interval: it stays live 3 intervals and 2 s after its last one (and
 * beats at once after applying a change, so a wait that succeeds does not wait for it). Instance b
 * must still count as live when the command begins its wait, after the network went silent: at
 * least 22 s after the silence here, against a command that starts within a few seconds even on
 * a loaded machine (at 500 ms it was 3.5 s, and a busy run missed it).
 */
const HEARTBEAT_MS = 10_000;
/**
 * The bound given to the wait that must run out, in seconds, and the margin a loaded machine gets
 * beyond it for starting the command's process and connecting: 5 s was missed by 15 ms at a load
 * average of 11. What the check must catch is a wait with no bound, or one held to the command's
 * 60 s statement timeout: 3 s + 12 s stays well short of that.
 */
const WAIT_SECONDS = 3;
const WAIT_MARGIN_MS = 12_000;

let proxy: TcpProxy;
let databaseUrl: string;
let stateDir: string;
let a: Gateway;
let b: Gateway;
let acme: TestIssuer;
const children: ChildProcess[] = [];

/** Runs `npx paygate-auth …` on the database (directly, not through the proxy). */
function cli(...args: string[]) {
  return paygateAuth(databaseUrl, args);
}

async function onBoth(bearer: string): Promise<Answer[]> {
  return Promise.all([info(a, bearer), info(b, bearer)]);
}

interface FleetJson {
  registry: { change: number; digest: string };
  control: number;
  instances: { name: string; live: boolean; registry: { change: number; digest: string }; control: number }[];
}

async function fleet(): Promise<FleetJson> {
  const ran = await cli('fleet', '--all', '--json');
  expect(ran.code, ran.stderr).toBe(0);
  return JSON.parse(ran.stdout) as FleetJson;
}

describe.skipIf(SKIP)('the fleet of two example gateways, one behind a proxy that goes silent', () => {
  beforeAll(async () => {
    requireBuild();
    stateDir = mkdtempSync(join(tmpdir(), 'paygate-fleet-'));
    const db = await createTestDatabase('fleet');
    databaseUrl = db.url;
    proxy = await startProxy(db.port);
    const common = {
      PAYGATE_EXAMPLE_STATE_DIR: stateDir,
      PAYGATE_HEARTBEAT_MS: String(HEARTBEAT_MS),
      PAYGATE_REGISTRY_POLL_MS: '1000',
      PAYGATE_CONTROLS_POLL_MS: '1000',
    };
    a = await startGateway({ ...common, DATABASE_URL: databaseUrl, PAYGATE_INSTANCE_NAME: 'gateway-a' }, children);
    b = await startGateway({ ...common, DATABASE_URL: proxy.via(databaseUrl), PAYGATE_INSTANCE_NAME: 'gateway-b' }, children);
    acme = await createTestIssuer({ issuer: 'https://auth.acme.example', product: 'acme', audience: AUDIENCE, lifetime: 3600 });
    await acme.listen();
    const added = await cli('issuers', 'add', '--issuer', acme.issuer, '--jwks-uri', acme.jwksUri, '--product', 'acme', '--wait');
    expect(added.code, added.stderr).toBe(0);
  });

  afterAll(async () => {
    await Promise.all(children.map((child) => stopProcess(child)));
    await acme?.close();
    await proxy?.close();
    if (stateDir !== undefined) rmSync(stateDir, { recursive: true, force: true });
  });

  it('issuers add --wait returned once both instances apply the issuer: both accept its token at once', async () => {
    expect((await onBoth(await acme.token())).map((answer) => answer.status)).toEqual([200, 200]);
  });

  it('fleet lists both instances live, each with the change and digest the table holds', async () => {
    const listed = await fleet();
    expect(listed.instances.map(({ name, live }) => ({ name, live }))).toEqual([
      { name: 'gateway-a', live: true },
      { name: 'gateway-b', live: true },
    ]);
    for (const instance of listed.instances) {
      expect(instance.registry).toMatchObject({ change: listed.registry.change, digest: listed.registry.digest });
    }
    const text = await cli('fleet');
    expect(text.stdout).toMatch(
      /^ {2}"gateway-a" {2}heard \d+\.\d s ago {2}registry #\d+ [0-9a-f]{12} \(2 issuer\(s\)\) {2}controls #\d+ {2}up to date$/m,
    );
  });

  it('suspend-issuer --wait returns after both instances have applied it: both refuse the issuer at once', async () => {
    const ran = await cli('suspend-issuer', '--issuer', acme.issuer, '--wait');
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toMatch(/^Applied by every live instance \("gateway-a", "gateway-b"\) within \d+\.\d s\.$/m);
    const answers = await onBoth(await acme.token());
    expect(answers.map((answer) => [answer.status, answer.body.code])).toEqual([
      [401, 'issuer_suspended'],
      [401, 'issuer_suspended'],
    ]);
    expect((await cli('resume-issuer', '--issuer', acme.issuer, '--wait')).code).toBe(0);
    expect((await onBoth(await acme.token())).map((answer) => answer.status)).toEqual([200, 200]);
  });

  it('suspend-issuer --wait names the instance behind a silent network once its bound has passed, and exits 1', async () => {
    proxy.silence();
    try {
      const started = Date.now();
      const ran = await cli('suspend-issuer', '--issuer', acme.issuer, '--wait', '--wait-timeout', String(WAIT_SECONDS));
      const took = Date.now() - started;
      expect(ran.code).toBe(1);
      expect(ran.stdout).toMatch(
        new RegExp(
          `^Not applied within ${WAIT_SECONDS}\\.0 s by 1 of 2 live instance\\(s\\): "gateway-b" \\(last heard \\d+\\.\\d s ago; applied registry change #\\d+, control #\\d+\\)\\. Applied by "gateway-a"\\.$`,
          'm',
        ),
      );
      expect(took).toBeLessThan(WAIT_SECONDS * 1000 + WAIT_MARGIN_MS);
      const listed = await cli('fleet', '--all');
      expect(listed.stdout).toMatch(/^ {2}"gateway-b" .*controls behind \(#\d+ of #\d+\)/m);
      expect((await info(a, await acme.token())).body.code).toBe('issuer_suspended');
    } finally {
      proxy.heal();
      proxy.reset();
    }
    await eventually(
      'gateway-b applies the suspension once the network is back',
      async () => (await info(b, await acme.token())).body.code === 'issuer_suspended',
    );
    await eventually('fleet shows both up to date', async () => {
      const listed = await fleet();
      return listed.instances.every((instance) => instance.live && instance.control === listed.control);
    });
  });
});
