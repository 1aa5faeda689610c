/**
 * Crash-safe file writes for Node: the text goes to a temporary file beside the target, which is
 * fsynced, then renamed (or linked, when the target must not be overwritten) into place, and the
 * directory is fsynced. A crash leaves the old file or the new one, never half of one; at worst a
 * `*.tmp` file, which the key store's sweep removes. `node:fs` is loaded on first use.
 */

import { quote } from '../internal/index.js';

/** The suffix of the temporary files {@link writeFileDurably} leaves behind after a crash. */
export const TEMPORARY_SUFFIX = '.tmp';

/** `true` for a Node error with this `code`. */
export function hasCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}

/** Flushes `directory`'s entries (a rename, a new link, an unlink) to the disk. */
export async function syncDirectory(directory: string): Promise<void> {
  const fs = await import('node:fs/promises');
  let handle: import('node:fs/promises').FileHandle;
  try {
    handle = await fs.open(directory, 'r');
  } catch (error) {
    // Windows opens no directory; its renames are durable enough once the file itself is synced.
    if (process.platform === 'win32') return;
    throw error;
  }
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Creates `directory` with `mode` (and the missing directories above it) durably: each new
 * directory's entry is fsynced in its parent, or a crash could lose the new directory, and the
 * key files written into it with it. An existing directory is left as it is.
 */
export async function makeDirectoryDurably(directory: string, mode: number): Promise<void> {
  const [fs, path] = await Promise.all([import('node:fs/promises'), import('node:path')]);
  const first = await fs.mkdir(directory, { recursive: true, mode });
  if (first === undefined) return;
  // From the deepest new directory up to the first one made: each one's parent holds its entry.
  for (let made = path.resolve(directory); ; made = path.dirname(made)) {
    await syncDirectory(path.dirname(made));
    if (made === path.resolve(first)) return;
  }
}

/**
 * `error`, a failure of a write of `file` through `temporary`, naming `file`: the caller named it,
 * never the temporary file (gone by now). A disk error of the write itself (ENOSPC, EIO) names no
 * file at all, and would reach a log line without saying which write failed.
 */
function namingTarget(error: unknown, temporary: string, file: string): unknown {
  if (!(error instanceof Error)) return error;
  const failure = error as Error & { path?: unknown };
  if (failure.path !== undefined && failure.path !== temporary) return error;
  failure.path = file;
  const message = failure.message.split(temporary).join(file);
  failure.message = message.includes(file) ? message : `${message}, writing ${quote(file)}`;
  return error;
}

/**
 * Writes `text` to `file` crash-safely with `mode`. With `overwrite: false` an existing `file` is
 * kept and the write fails with the `EEXIST` error.
 */
export async function writeFileDurably(
  file: string,
  text: string,
  options: { readonly mode: number; readonly overwrite: boolean },
): Promise<void> {
  const [fs, path] = await Promise.all([import('node:fs/promises'), import('node:path')]);
  const temporary = `${file}.${crypto.randomUUID()}${TEMPORARY_SUFFIX}`;
  try {
    const handle = await fs.open(temporary, 'wx', options.mode);
    try {
      try {
        await handle.writeFile(text, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
      if (options.overwrite) await fs.rename(temporary, file);
      else await fs.link(temporary, file);
    } finally {
      await fs.rm(temporary, { force: true });
    }
  } catch (error) {
    throw namingTarget(error, temporary, file);
  }
  await syncDirectory(path.dirname(file));
}

/** Temporary files older than this are left by a write killed halfway, not one under way. */
export const STALE_TEMPORARY_MS = 60_000;

const UUID_PART = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Removes the temporary files that writes of `file` killed halfway left beside it
 * (`<name>.<uuid>.tmp`: a private key, for a key file), once older than `olderThanMs`, so that a
 * write still under way in another process is spared. Other files are never touched. Resolves
 * the names removed.
 */
export async function sweepTemporaries(file: string, olderThanMs = STALE_TEMPORARY_MS): Promise<string[]> {
  const [fs, path] = await Promise.all([import('node:fs/promises'), import('node:path')]);
  const directory = path.dirname(file);
  const prefix = `${path.basename(file)}.`;
  let names: string[];
  try {
    names = await fs.readdir(directory);
  } catch (error) {
    if (hasCode(error, 'ENOENT')) return [];
    throw error;
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith(TEMPORARY_SUFFIX)) continue;
    if (!UUID_PART.test(name.slice(prefix.length, -TEMPORARY_SUFFIX.length))) continue;
    const left = path.join(directory, name);
    const stats = await fs.lstat(left).catch(() => undefined);
    if (stats === undefined || !stats.isFile() || Date.now() - stats.mtimeMs < olderThanMs) continue;
    if (await removeFileDurably(left)) removed.push(name);
  }
  return removed;
}

/** Deletes `file` (missing is no error) and fsyncs its directory. */
export async function removeFileDurably(file: string): Promise<boolean> {
  const [fs, path] = await Promise.all([import('node:fs/promises'), import('node:path')]);
  try {
    await fs.unlink(file);
  } catch (error) {
    if (hasCode(error, 'ENOENT')) return false;
    throw error;
  }
  await syncDirectory(path.dirname(file));
  return true;
}
