/**
 * What FileKeyStore.generate() writes: the schedule before the first key file only (that order is
 * checked in file-key-store.test.ts). Once the
 * schedule exists, a new key writes its key file alone: no throw-away copy of the schedule (a
 * temporary file written and fsynced for nothing), whose failure on a full disk would name
 * schedule.json for a key file's write.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('node:fs/promises', async (original) => (await import('../support/fs-steps.js')).recordingFs(await original()));

const { steps } = await import('../support/fs-steps.js');
const { FileKeyStore } = await import('../../src/issuer/index.js');

let directory: string;

beforeEach(async () => {
  directory = join(await mkdtemp(join(tmpdir(), 'paygate-generate-writes-')), 'keys');
});

afterEach(async () => {
  await rm(join(directory, '..'), { recursive: true, force: true });
});

describe('FileKeyStore.generate()', () => {
  it('writes only the key file once the schedule exists', async () => {
    const store = new FileKeyStore({ directory });
    await store.generate();
    steps.length = 0;
    const { kid } = await store.generate();
    expect(steps.filter((step) => step.includes('schedule.json'))).toEqual([]);
    expect(steps).toContain(`link ${kid}.pem.<uuid>.tmp ${kid}.pem`);
  });
});
