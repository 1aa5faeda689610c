/**
 * The issuer kit through crashes: a child process runs an issuer over a FileKeyStore directory
 * (start-up, rotation, compromise, ticks, signatures) and is SIGKILLed at a random moment, 50 times
 * over the same directory. After each kill, a fresh start-up must load the store, no key may sign
 * before it has been published for the publication lead, the schedule must hold a standby, no file
 * may remain that the schedule does not name, and every token the child signed that is still live
 * (and not of a compromised key) must verify against the JWKS. The child compromises signing keys
 * and standbys alike. Needs the build (`npm test` runs it first).
 *
 * The keys come from the run's pool (test/support/key-pool.ts): the children's from keys reserved
 * for them, handed out one after another across their lives (test/support/pooled-keys-child.mjs),
 * the start-ups' here from the rest of the file's. What is crashed is the key store's writes, not
 * the search for primes, which took most of the file's time.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileKeyStore, createIssuer } from '../../src/issuer/index.js';
import { CLOCK_START } from '../support/jwks-clock.js';
import { reservePooledKeys } from '../support/key-pool.js';

const here = dirname(fileURLToPath(import.meta.url));
const built = existsSync(resolve(here, '../../dist/issuer/index.js'));
const CHILD = join(here, 'fixtures/crash-child.mjs');
const POOLED_KEYS = pathToFileURL(resolve(here, '../support/pooled-keys-child.mjs')).href;
/** Keys of the pool reserved for the children: more than their 50 lives ask for (about 35). */
const CHILD_KEYS = 40;
const RUNS = 50;
const LEAD_MS = 600_000;
const ISS = 'https://auth.acme.example';
const AUD = 'https://payments.example';

interface Life {
  /** The latest simulated time the child reached. */
  readonly t: number;
  /** Lines the child wrote before it was killed (1: killed during start-up). */
  readonly lines: number;
  readonly tokens: readonly { readonly token: string; readonly at: number }[];
  readonly compromised: readonly string[];
}

/**
 * Runs the child and SIGKILLs it `delay` ms after its `lines`-th line (`lines` 0: `delay` ms after
 * the spawn, during start-up), whatever the machine's speed; collects what it said.
 */
function live(directory: string, keys: string, start: number, seed: number, lines: number, delay: number): Promise<Life> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--import', POOLED_KEYS, CHILD, directory, String(start), String(seed)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PAYGATE_TEST_KEYS: keys },
    });
    let out = '';
    let err = '';
    let timer: NodeJS.Timeout | undefined;
    const killSoon = () => {
      timer ??= setTimeout(() => child.kill('SIGKILL'), delay);
    };
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.split('\n').length - 1 >= lines) killSoon();
    });
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    if (lines === 0) killSoon();
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      clearTimeout(timer);
      if (signal !== 'SIGKILL') return reject(new Error(`the child ended by itself: ${err}`));
      let t = start;
      const tokens: { token: string; at: number }[] = [];
      const compromised: string[] = [];
      for (const line of out.split('\n')) {
        if (line === '') continue;
        let fact: { t?: number; token?: string; at?: number; compromising?: string };
        try {
          fact = JSON.parse(line);
        } catch {
          continue; // the last line, cut by the kill
        }
        if (fact.t !== undefined) t = fact.t;
        if (fact.token !== undefined) tokens.push({ token: fact.token, at: fact.at as number });
        if (fact.compromising !== undefined) compromised.push(fact.compromising);
      }
      resolvePromise({ t, lines: out.split('\n').length - 1, tokens, compromised });
    });
  });
}

describe.skipIf(!built)('the issuer kit SIGKILLed at random points of start-up, rotation and compromise, 50 times', () => {
  let directory: string;
  const problems: string[] = [];
  let checkedTokens = 0;
  let kills = 0;
  let killedInStartUp = 0;
  let compromises = 0;

  beforeAll(async () => {
    const workdir = await mkdtemp(join(tmpdir(), 'paygate-crash-'));
    directory = join(workdir, 'keys');
    const childKeys = join(workdir, 'child-keys.json');
    await writeFile(childKeys, JSON.stringify(reservePooledKeys(CHILD_KEYS)), { mode: 0o600 });
    let t = CLOCK_START;
    let tokens: { token: string; at: number }[] = [];
    const compromised = new Set<string>();
    for (let run = 1; run <= RUNS; run += 1) {
      // Kill points spread over start-up (no line yet, or only the first) and the steps after it.
      const life = await live(directory, childKeys, t, run * 7919, (run * 7) % 12, (run * 13) % 25);
      kills += 1;
      if (life.lines <= 1) killedInStartUp += 1;
      compromises += life.compromised.length;
      t = life.t;
      tokens.push(...life.tokens);
      for (const kid of life.compromised) compromised.add(kid);
      const where = `run ${run}`;
      // The start-up after the crash: loads the store, sweeps, checks every key file.
      const issuer = await createIssuer({
        issuer: ISS,
        audience: AUD,
        product: 'acme',
        now: () => t,
        maxLifetime: 3600,
        lifetime: 3600,
        keyStore: new FileKeyStore({ directory, sweepAfter: 0 }),
        rotation: { interval: 7200, publishLead: LEAD_MS / 1000, retentionMargin: 60 },
      }).catch((error: unknown) => {
        problems.push(`${where}: the store did not load: ${String(error)}`);
        return undefined;
      });
      if (issuer === undefined) break;
      const records = await new FileKeyStore({ directory }).loadSchedule();
      for (const record of records) {
        if (record.signsFrom - record.publishedAt < LEAD_MS)
          problems.push(`${where}: key ${record.kid} signs ${record.signsFrom - record.publishedAt} ms after its publication`);
      }
      // The start-up publishes a standby when a crash cut a compromise short before its new one was saved.
      if (!records.some((record) => record.standby === true)) problems.push(`${where}: the schedule holds no standby`);
      const named = new Set(['schedule.json', ...records.map((record) => `${record.kid}.pem`)]);
      for (const name of await readdir(directory))
        if (!named.has(name)) problems.push(`${where}: ${name} is left, which the schedule does not name`);
      const jwks = createLocalJWKSet(issuer.jwks().document as never);
      tokens = tokens.filter(({ at }) => at + 3_600_000 > t);
      for (const { token } of tokens) {
        if (compromised.has(decodeProtectedHeader(token).kid as string)) continue;
        checkedTokens += 1;
        await jwtVerify(token, jwks, { currentDate: new Date(t), issuer: ISS, audience: AUD }).catch((error: unknown) => {
          problems.push(`${where}: a live token no longer verifies: ${String(error)}`);
        });
      }
    }
  });

  afterAll(async () => {
    if (directory !== undefined) await rm(join(directory, '..'), { recursive: true, force: true });
  });

  it('killed the child 50 times, in start-up and after compromises, and checked live tokens after the kills', () => {
    expect(kills).toBe(RUNS);
    expect(killedInStartUp).toBeGreaterThan(0);
    expect(compromises).toBeGreaterThan(0);
    expect(checkedTokens).toBeGreaterThan(0);
  });

  it('after every kill: the store loads, no key signs before its lead, a standby is held, no unnamed file remains, live tokens verify', () => {
    expect(problems).toEqual([]);
  });
});
