import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('node:fs/promises', async (original) => (await import('../support/fs-steps.js')).recordingFs(await original()));

const { steps } = await import('../support/fs-steps.js');
const { makeDirectoryDurably, writeFileDurably } = await import('../../src/issuer/durable-file.js');

let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'paygate-durable-'));
  steps.length = 0;
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
