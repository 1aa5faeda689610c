/**
 * A lock held across processes while one of them builds dist/ (examples/ensure-build.mjs), so
 * that two `npm test` runs, or `npm test` beside `npm run example`, never build at once: the
 * second waits for the first, then finds dist/ current and builds nothing.
 *
 * The lock is a directory holding `owner.json` (the holder's process id, host and a token of its
 * own). It is made with `mkdir` under a name of the caller's own, its owner written in it, then
 * renamed to the lock's name: of two processes, one renames, the other's rename fails as the lock
 * is there and not empty. So a lock is never seen without its owner. The holder touches the
 * directory every `refreshMs` while it works, and removes it after.
 *
 * A lock is stale, and taken over, when its holder is gone: its process no longer runs (on this
 * host; a build killed with SIGKILL), or nobody touched the directory for `staleMs` (a holder
 * on another host, a process id used again, an owner that cannot be read). A waiter takes it
 * over under a guard that one waiter holds at a time, removing it only if it is still the lock it
 * judged stale; then it takes the lock as any caller does. A waiter gives up after `waitMs`,
 * naming the lock and its holder. What a process killed halfway through taking leaves beside the
 * lock is removed by the next holder once `staleMs` old, and a guard it left once as old.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Defaults of {@link withLock}'s options, in milliseconds. */
export const LOCK_DEFAULTS = Object.freeze({
  /** Untouched for this long, a lock is stale: twelve refreshes missed. */
  staleMs: 60_000,
  /** How often the holder touches its lock. */
  refreshMs: 5_000,
  /** The longest a caller waits for a holder that keeps its lock fresh. */
  waitMs: 15 * 60_000,
  /** How often a waiter looks at the lock again. */
  pollMs: 200,
});

/** A holder kept its lock past the caller's `waitMs`. */
export class LockTimeoutError extends Error {
  name = 'LockTimeoutError';
  code = 'lock_timeout';
}

const OWNER_FILE = 'owner.json';

/** `true` while process `pid` runs (one of another user's answers EPERM). */
function running(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** The lock at `path` as it is now: its owner (`null` when unreadable), inode and last touch; `null` when there is none. */
async function look(path) {
  let status;
  try {
    status = await stat(path);
  } catch (error) {
    if (error.code === 'ENOENT') return null;
    throw error;
  }
  let owner = null;
  try {
    const parsed = JSON.parse(await readFile(join(path, OWNER_FILE), 'utf8'));
    if (Number.isSafeInteger(parsed?.pid) && typeof parsed.host === 'string' && typeof parsed.token === 'string') owner = parsed;
  } catch {
    // Torn, or written by hand: the lock is judged by its age alone.
  }
  return { owner, ino: status.ino, touched: status.mtimeMs };
}

function isStale(lock, staleMs) {
  if (lock.owner !== null && lock.owner.host === hostname() && !running(lock.owner.pid)) return true;
  return Date.now() - lock.touched > staleMs;
}

const sameLock = (a, b) => a !== null && b !== null && a.ino === b.ino && a.owner?.token === b.owner?.token;

/**
 * Removes the stale `lock`, under a guard (`<path>.takeover`, made with `mkdir`) that one waiter
 * holds at a time: under it, the lock is removed only if it is still the one judged stale, so a
 * waiter that judged late never removes the lock another waiter took over meanwhile. A guard left
 * by a waiter killed while it held one is removed once `staleMs` old.
 */
async function takeOver(path, lock, staleMs) {
  const guard = `${path}.takeover`;
  try {
    await mkdir(guard);
  } catch (error) {
    if (error.code !== 'EEXIST') throw error;
    const touched = await stat(guard).then(
      (status) => status.mtimeMs,
      () => Date.now(),
    );
    if (Date.now() - touched > staleMs) await rm(guard, { recursive: true, force: true });
    return;
  }
  try {
    if (sameLock(await look(path), lock)) await remove(path);
  } finally {
    await rm(guard, { recursive: true, force: true });
  }
}

/** Makes the lock directory with this caller's owner in it; `false` when another holds it. */
async function take(path, token) {
  const staged = `${path}.new-${token}`;
  await mkdir(staged, { recursive: true });
  await writeFile(join(staged, OWNER_FILE), JSON.stringify({ pid: process.pid, host: hostname(), token, since: new Date().toISOString() }));
  try {
    await rename(staged, path);
    return true;
  } catch (error) {
    await rm(staged, { recursive: true, force: true });
    if (error.code === 'ENOTEMPTY' || error.code === 'EEXIST') return false;
    throw error;
  }
}

/** Removes what callers killed while taking or removing a lock left beside it, once `staleMs` old. */
async function sweep(path, staleMs) {
  const prefix = `${basename(path)}.`;
  for (const name of await readdir(dirname(path))) {
    if (!name.startsWith(`${prefix}new-`) && !name.startsWith(`${prefix}gone-`)) continue;
    const left = join(dirname(path), name);
    const touched = await stat(left).then(
      (status) => status.mtimeMs,
      () => Date.now(),
    );
    if (Date.now() - touched > staleMs) await rm(left, { recursive: true, force: true });
  }
}

/** Removes the lock if it is still this caller's (a holder judged stale may have lost it). */
async function release(path, token) {
  const lock = await look(path);
  if (lock?.owner?.token === token) await remove(path);
}

/**
 * Removes the lock directory at `path`: renamed away first, then deleted. Deleted in place, it
 * would be empty for a moment, and a waiter's rename may replace an empty directory: the waiter
 * would hold a lock that the deletion then fails on, or deletes.
 */
async function remove(path) {
  const gone = `${path}.gone-${randomUUID()}`;
  try {
    await rename(path, gone);
  } catch (error) {
    if (error.code === 'ENOENT') return;
    throw error;
  }
  await rm(gone, { recursive: true, force: true });
}

function describeHolder(lock) {
  const { owner } = lock;
  return owner === null ? 'a holder whose owner.json cannot be read' : `process ${owner.pid} on ${owner.host}, since ${owner.since}`;
}

/**
 * Runs `work` holding the lock at `path` (a directory; its parent is made if missing), and
 * resolves or rejects as `work` does, the lock removed. Names beside `path` starting with its
 * own name are the lock's.
 * @param {string} path
 * @param {() => Promise<T>} work
 * @param {{ staleMs?: number, refreshMs?: number, waitMs?: number, pollMs?: number,
 *   onWait?: (holder: string) => void }} [options] `onWait` is told once, naming the holder,
 *   when the caller has to wait.
 * @returns {Promise<T>}
 * @template T
 */
export async function withLock(path, work, options = {}) {
  const { staleMs, refreshMs, waitMs, pollMs } = { ...LOCK_DEFAULTS, ...options };
  const token = randomUUID();
  const started = Date.now();
  let told = false;
  while (!(await take(path, token))) {
    const lock = await look(path);
    if (lock === null) continue;
    if (isStale(lock, staleMs)) {
      await takeOver(path, lock, staleMs);
      continue;
    }
    if (Date.now() - started >= waitMs) {
      throw new LockTimeoutError(
        `${path} has been held for more than ${waitMs} ms by ${describeHolder(lock)}; if that build is not running, remove ${path}`,
      );
    }
    if (!told) options.onWait?.(describeHolder(lock));
    told = true;
    await sleep(pollMs);
  }
  const refresh = setInterval(() => {
    const now = new Date();
    utimes(path, now, now).catch(() => undefined);
  }, refreshMs);
  refresh.unref();
  try {
    await sweep(path, staleMs);
    return await work();
  } finally {
    clearInterval(refresh);
    await release(path, token);
  }
}
