/**
 * A write that fails on a full or read-only disk: the error the key store passes on (to
 * startSchedule's onError, or out of createIssuer) names the file it was writing, never the
 * temporary file beside it, which is gone by then.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

/** Node's own ENOSPC from a handle's write carries no path. */
function noSpace(): NodeJS.ErrnoException {
  return Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
}

vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...fs,
    open: async (file: string, flags: string, mode?: number) => {
      const handle = await fs.open(file, flags, mode);
      if (String(file).endsWith('.tmp')) handle.writeFile = () => Promise.reject(noSpace());
      return handle;
    },
  };
});

const { writeFileDurably } = await import('../../src/issuer/durable-file.js');

let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'paygate-durable-errors-'));
});

afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('writeFileDurably on a full disk', () => {
  it('fails with the disk error naming the file it was writing, and leaves no temporary file', async () => {
    const file = join(directory, 'schedule.json');
    const error = (await writeFileDurably(file, '{}', { mode: 0o644, overwrite: true }).catch(
      (caught: unknown) => caught,
    )) as NodeJS.ErrnoException;
    expect(error.code).toBe('ENOSPC');
    expect(error.path).toBe(file);
    expect(error.message).toContain(file);
    expect(error.message).not.toContain('.tmp');
    expect(await readdir(directory)).toEqual([]);
  });
});
