/**
 * `paygate-auth keys generate --jwks`: the JWKS file is written crash-safely, as the key file is
 * (a crash leaves no file or the whole one, never half of one).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { COMMANDS } from '../../src/cli/commands.js';
import { EXIT, runCli } from '../../src/cli/run-cli.js';
import { captureIo } from './cli-io.js';

vi.mock('node:fs/promises', async (original) => (await import('../support/fs-steps.js')).recordingFs(await original()));

const { steps } = await import('../support/fs-steps.js');

let directory: string;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'paygate-cli-keys-'));
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('keys generate --jwks', () => {
  it('fsyncs the JWKS, links it into place (never over a file) and fsyncs the directory', async () => {
    const jwks = join(directory, 'public.jwks.json');
    steps.length = 0;
    const code = await runCli(['keys', 'generate', '--out', join(directory, 'private.pem'), '--jwks', jwks], captureIo(), COMMANDS);
    expect(code).toBe(EXIT.ok);
    const dir = directory.split('/').pop();
    expect(steps.filter((step) => step.includes('public.jwks.json') || step === `fsync ${dir}`).slice(-3)).toEqual([
      'fsync public.jwks.json.<uuid>.tmp',
      'link public.jwks.json.<uuid>.tmp public.jwks.json',
      `fsync ${dir}`,
    ]);
    expect(JSON.parse(await readFile(jwks, 'utf8'))).toMatchObject({ keys: [{ kty: 'RSA', alg: 'RS256', use: 'sig' }] });
  });
});
