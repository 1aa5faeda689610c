import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

/** Set by a test: the write of every temporary file fails as on a full disk. */
const disk = vi.hoisted(() => ({ full: false }));

/** Node's own ENOSPC from a handle's write carries no path. */
function noSpace(): NodeJS.ErrnoException {
  return Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
}

vi.mock('node:fs/promises', async (original) => {
  const fs = (await import('../support/fs-steps.js')).recordingFs(await original<typeof import('node:fs/promises')>());
  return {
    ...fs,
    open: async (file: string, flags: string, mode?: number) => {
      const handle = await fs.open(file, flags, mode);
      if (disk.full && String(file).endsWith('.tmp')) handle.writeFile = () => Promise.reject(noSpace());
      return handle;
    },
  };
});

const { steps } = await import('../support/fs-steps.js');
const { makeDirectoryDurably, writeFileDurably } = await import('../../src/issuer/durable-file.js');
const { FileKeyStore } = await import('../../src/issuer/index.js');

let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'paygate-durable-'));
  steps.length = 0;
  disk.full = false;
});

afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('writeFileDurably', () => {
  it('fsyncs the temporary file, renames it over the target, then fsyncs the directory', async () => {
    await writeFileDurably(join(directory, 'schedule.json'), '{}', { mode: 0o644, overwrite: true });
    const dir = directory.split('/').pop();
    expect(steps).toEqual(['fsync schedule.json.<uuid>.tmp', 'rename schedule.json.<uuid>.tmp schedule.json', `fsync ${dir}`]);
    expect(await readdir(directory)).toEqual(['schedule.json']);
  });

  it('links a file that must not be overwritten, and keeps an existing one', async () => {
    const file = join(directory, 'k.pem');
    await writeFileDurably(file, 'first', { mode: 0o600, overwrite: false });
    expect(steps).toEqual(['fsync k.pem.<uuid>.tmp', 'link k.pem.<uuid>.tmp k.pem', `fsync ${directory.split('/').pop()}`]);
    await expect(writeFileDurably(file, 'second', { mode: 0o600, overwrite: false })).rejects.toMatchObject({
      code: 'EEXIST',
    });
    expect(await readFile(file, 'utf8')).toBe('first');
    expect(await readdir(directory)).toEqual(['k.pem']);
  });

  it('names the target, never its temporary file, in an error of the write', async () => {
    const file = join(directory, 'missing', 'jwks.json');
    await expect(writeFileDurably(file, '{}', { mode: 0o644, overwrite: false })).rejects.toMatchObject({ code: 'ENOENT', path: file });
  });
});

describe('makeDirectoryDurably', () => {
  it('fsyncs the parent of each directory it creates, deepest first', async () => {
    await makeDirectoryDurably(join(directory, 'a', 'b', 'c'), 0o700);
    expect(steps).toEqual(['fsync b', 'fsync a', `fsync ${directory.split('/').pop()}`]);
    expect(await readdir(join(directory, 'a', 'b'))).toEqual(['c']);
  });

  it('creates each new directory with the mode given', async () => {
    await makeDirectoryDurably(join(directory, 'keys'), 0o700);
    expect((await stat(join(directory, 'keys'))).mode & 0o777).toBe(0o700);
  });

  it('syncs nothing for a directory that exists already', async () => {
    await makeDirectoryDurably(directory, 0o700);
    expect(steps).toEqual([]);
  });
});

describe('writeFileDurably on a full disk', () => {
  it('fails with the disk error naming the file it was writing, and leaves no temporary file', async () => {
    disk.full = true;
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

describe('FileKeyStore.generate()', () => {
  // The schedule goes before the first key file (file-key-store.test.ts checks that order); once it
  // exists, a throw-away copy written and fsynced for nothing would be a full disk's first failure,
  // naming schedule.json for a key file's write.
  it('writes only the key file once the schedule exists', async () => {
    const store = new FileKeyStore({ directory: join(directory, 'keys') });
    await store.generate();
    steps.length = 0;
    const { kid } = await store.generate();
    expect(steps.filter((step) => step.includes('schedule.json'))).toEqual([]);
    expect(steps).toContain(`link ${kid}.pem.<uuid>.tmp ${kid}.pem`);
  });
});
