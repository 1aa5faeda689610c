/**
 * The lock around the build of dist/ (examples/build-lock.mjs), on its own: the build is a
 * function of the test's. One holder at a time; a waiter runs after the holder; a holder that was
 * killed, or that nobody has heard of for `staleMs`, does not block; a live holder is waited for
 * up to `waitMs`, no longer.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { LockTimeoutError, withLock } from '../../examples/build-lock.mjs';
import { LOADED_MARGIN_MS, PATIENCE_MS } from '../support/loaded-machine.js';

const lockModule = fileURLToPath(new URL('../../examples/build-lock.mjs', import.meta.url));
const scratch: string[] = [];
const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const directory of scratch.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** A lock path in a directory of its own (the lock's parent is made by the lock). */
function lockPath(): string {
  const directory = mkdtempSync(join(tmpdir(), 'paygate-build-lock-'));
  scratch.push(directory);
  return join(directory, '.tmp', 'build.lock');
}

/** A lock left as a holder that is gone would leave it: `owner` written, untouched since `touchedMsAgo`. */
function leftLock(path: string, owner: object | null, touchedMsAgo: number): void {
  mkdirSync(path, { recursive: true });
  if (owner !== null) writeFileSync(join(path, 'owner.json'), JSON.stringify(owner));
  const then = new Date(Date.now() - touchedMsAgo);
  utimesSync(path, then, then);
}

/** A fake build that records when it ran, taking `ms`. */
function fakeBuild(runs: { start: number; end: number }[], ms: number): () => Promise<void> {
  return async () => {
    const start = performance.now();
    await new Promise((resolve) => setTimeout(resolve, ms));
    runs.push({ start, end: performance.now() });
  };
}

const overlapping = (runs: readonly { start: number; end: number }[]): boolean =>
  runs.some((a, i) => runs.some((b, j) => i !== j && a.start < b.end && b.start < a.end));

/** Resolves once `check` is true, trying every 10 ms, for up to PATIENCE_MS. */
async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + PATIENCE_MS;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${PATIENCE_MS} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('the build lock', () => {
  it('runs the work holding the lock, and removes the lock after it', async () => {
    const path = lockPath();
    const heldDuring = await withLock(path, async () => existsSync(join(path, 'owner.json')));
    expect(heldDuring).toBe(true);
    expect(existsSync(path)).toBe(false);
  });

  it('removes the lock when the work fails, and rejects with its error', async () => {
    const path = lockPath();
    await expect(withLock(path, () => Promise.reject(new Error('tsup failed')))).rejects.toThrow('tsup failed');
    expect(existsSync(path)).toBe(false);
  });

  it('makes a second caller wait for the first and then run: the two works never overlap', async () => {
    const path = lockPath();
    const runs: { start: number; end: number }[] = [];
    const waits: string[] = [];
    const first = withLock(path, fakeBuild(runs, 300));
    await until('the first holds the lock', () => existsSync(join(path, 'owner.json')));
    await withLock(path, fakeBuild(runs, 10), { onWait: (holder) => waits.push(holder) });
    await first;
    expect(runs).toHaveLength(2);
    expect(overlapping(runs)).toBe(false);
    expect(waits).toEqual([expect.stringContaining(`process ${process.pid}`)]);
  });

  it('takes over at once the lock of a holder killed while it worked (SIGKILL): a crash never blocks the next build', async () => {
    const path = lockPath();
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { withLock } from ${JSON.stringify(lockModule)};
         setInterval(() => {}, 1000);
         await withLock(process.env.LOCK, () => { console.log('held'); return new Promise(() => {}); });`,
      ],
      { env: { ...process.env, LOCK: path }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    children.push(child);
    let output = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    await until('the child holds the lock', () => output.includes('held'));
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(existsSync(path)).toBe(true);
    // Were the dead holder's lock judged by its age alone, this would wait (a minute: staleMs),
    // and onWait would name the holder.
    const waitedFor: string[] = [];
    const settings = { staleMs: 60_000, waitMs: PATIENCE_MS, onWait: (holder: string) => waitedFor.push(holder) };
    expect(await withLock(path, async () => 'built', settings)).toBe('built');
    expect(waitedFor).toEqual([]);
  });

  it('takes over a lock of a holder on another host once nobody touched it for staleMs', async () => {
    const path = lockPath();
    leftLock(path, { pid: process.pid, host: 'another-host.example', token: 'theirs', since: '2026-01-01T00:00:00Z' }, 2_000);
    expect(await withLock(path, async () => 'built', { staleMs: 1_000, waitMs: PATIENCE_MS })).toBe('built');
    expect(existsSync(path)).toBe(false);
  });

  it('takes over a lock whose owner cannot be read (torn, or written by hand) once untouched for staleMs', async () => {
    const path = lockPath();
    leftLock(path, null, 2_000);
    writeFileSync(join(path, 'owner.json'), '{"pid": 12');
    const then = new Date(Date.now() - 2_000);
    utimesSync(path, then, then);
    expect(await withLock(path, async () => 'built', { staleMs: 1_000, waitMs: PATIENCE_MS })).toBe('built');
  });

  it('removes what a process killed while taking or removing the lock left beside it, once staleMs old', async () => {
    const path = lockPath();
    leftLock(`${path}.new-killed`, { pid: 1, host: 'h', token: 'killed', since: '' }, 2_000);
    leftLock(`${path}.gone-killed`, { pid: 1, host: 'h', token: 'removed', since: '' }, 2_000);
    await withLock(path, async () => undefined, { staleMs: 1_000 });
    expect(existsSync(`${path}.new-killed`)).toBe(false);
    expect(existsSync(`${path}.gone-killed`)).toBe(false);
  });

  it('removes a takeover guard that a waiter killed while taking over left, once staleMs old', async () => {
    const path = lockPath();
    leftLock(path, { pid: process.pid, host: 'another-host.example', token: 'theirs', since: '' }, 2_000);
    leftLock(`${path}.takeover`, null, 2_000);
    expect(await withLock(path, async () => 'built', { staleMs: 1_000, pollMs: 20, waitMs: PATIENCE_MS })).toBe('built');
    expect(existsSync(`${path}.takeover`)).toBe(false);
  });

  it('keeps its lock fresh while the work outlasts staleMs: a waiter does not take it over', async () => {
    const path = lockPath();
    // Stale after LOADED_MARGIN_MS untouched, touched every 100 ms: only a holder stalled for the
    // whole margin could be taken over.
    const settings = { staleMs: LOADED_MARGIN_MS, refreshMs: 100, pollMs: 50, waitMs: PATIENCE_MS };
    const runs: { start: number; end: number }[] = [];
    const first = withLock(path, fakeBuild(runs, 2 * LOADED_MARGIN_MS), settings);
    await until('the first holds the lock', () => existsSync(join(path, 'owner.json')));
    await withLock(path, fakeBuild(runs, 10), settings);
    await first;
    expect(overlapping(runs)).toBe(false);
  });

  it('gives up after waitMs on a holder that keeps its lock fresh, naming the lock and the holder', async () => {
    const path = lockPath();
    const WAIT_MS = 500;
    let finish: () => void = () => undefined;
    const holder = withLock(
      path,
      () =>
        new Promise<void>((resolve) => {
          finish = resolve;
        }),
      { refreshMs: 100 },
    );
    await until('the holder holds the lock', () => existsSync(join(path, 'owner.json')));
    const started = performance.now();
    const refused = await withLock(path, async () => 'built', { waitMs: WAIT_MS, pollMs: 50 }).catch((error: unknown) => error);
    const waited = performance.now() - started;
    finish();
    await holder;
    expect(refused).toBeInstanceOf(LockTimeoutError);
    expect(refused).toMatchObject({ code: 'lock_timeout' });
    expect((refused as Error).message).toContain(path);
    expect((refused as Error).message).toContain(`process ${process.pid}`);
    // The lock counts whole milliseconds of Date.now(): up to 1 ms less than performance.now() shows.
    expect(waited).toBeGreaterThanOrEqual(WAIT_MS - 1);
    expect(waited).toBeLessThan(WAIT_MS + LOADED_MARGIN_MS);
  });

  it('lets one of several waiters take over a stale lock at a time: their works never overlap', async () => {
    const path = lockPath();
    leftLock(path, { pid: process.pid, host: 'another-host.example', token: 'theirs', since: '2026-01-01T00:00:00Z' }, 2_000);
    const runs: { start: number; end: number }[] = [];
    const settings = { staleMs: 1_000, pollMs: 20, waitMs: PATIENCE_MS };
    await Promise.all([1, 2, 3, 4].map(() => withLock(path, fakeBuild(runs, 50), settings)));
    expect(runs).toHaveLength(4);
    expect(overlapping(runs)).toBe(false);
  });
});
