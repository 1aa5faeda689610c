/**
 * The first hour of the docs works when pasted: the first snippet of docs/issuer.md runs as
 * written against the packed package and signs at once; the adapter options listed in the README
 * and in docs/configuration.md are exactly those the adapters take, and configuration.md's
 * createVerifier table is exactly the verifier's options. (docs/testing.md's recipe is
 * run by test/package/consumer.test.ts; its set-up order by test/testing/key-changes.test.ts.)
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { VERIFIER_OPTION_NAMES } from '../../src/core/verifier.js';
import { ADAPTER_OPTION_NAMES } from '../../src/http/adapter-options.js';
import { type PackedPackage, packedPackage } from '../support/packed-package.js';
import { PATIENCE_MS } from '../support/loaded-machine.js';

const run = promisify(execFile);
const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');
const packed = packedPackage();
const DEPENDENCIES = ['jose', 'lru-cache', 'fastify-plugin'];

const page = (file: string) => readFile(join(root, file), 'utf8');

/** The first fenced code block of `markdown` in one of `languages`. */
function firstSnippet(markdown: string, languages: readonly string[]): string {
  const match = [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].find((block) => languages.includes(block[1] as string));
  if (match === undefined) throw new Error('no snippet');
  return match[2] as string;
}

describe.skipIf(packed === null)('the first snippet of docs/issuer.md', () => {
  let project: string | undefined;
  afterAll(async () => {
    if (project !== undefined) await rm(project, { recursive: true, force: true });
  });

  it('runs as written in a project holding the package, and signs at once', async () => {
    project = await mkdtemp(join(tmpdir(), 'paygate-auth-snippet-'));
    const modules = join(project, 'node_modules');
    await mkdir(modules);
    await cp((packed as PackedPackage).unpacked, join(modules, 'paygate-auth'), { recursive: true });
    for (const name of DEPENDENCIES) await symlink(join(root, 'node_modules', name), join(modules, name), 'dir');
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'snippet', private: true, type: 'module' }));
    await writeFile(join(project, 'snippet.mjs'), firstSnippet(await page('docs/issuer.md'), ['js', 'ts', 'mjs']));
    const { stdout } = await run(process.execPath, ['snippet.mjs'], { cwd: project, timeout: PATIENCE_MS });
    expect(stdout.trim()).toBe('2 3');
  });
});

describe('the adapter options, wherever they are listed', () => {
  it("the README's list is every option the adapters take", async () => {
    const readme = await page('README.md');
    const sentence = /All five take the same\s+options: ([^(]*)\(/.exec(readme)?.[1] ?? '';
    expect([...sentence.matchAll(/`(\w+)`/g)].map((match) => match[1])).toEqual([...ADAPTER_OPTION_NAMES]);
  });

  it("docs/configuration.md's table has a row for every option the adapters take", async () => {
    const configuration = await page('docs/configuration.md');
    const section = configuration.slice(configuration.indexOf('## Adapter options'));
    const table = section.slice(0, section.indexOf('\n\n', section.indexOf('| option')));
    expect([...table.matchAll(/^\| `(\w+)` \|/gm)].map((match) => match[1])).toEqual([...ADAPTER_OPTION_NAMES]);
  });
});

describe("the verifier's options in docs/configuration.md", () => {
  it('the createVerifier table has a row for every option createVerifier takes, and no other', async () => {
    const configuration = await page('docs/configuration.md');
    const section = configuration.slice(configuration.indexOf('## `createVerifier(options)`'));
    const table = section.slice(0, section.indexOf('\n\n', section.indexOf('| option')));
    expect([...table.matchAll(/^\| `(\w+)` \|/gm)].map((match) => match[1])).toEqual([...VERIFIER_OPTION_NAMES]);
  });
});

describe('the Node 20 note on Fastify', () => {
  it("pins the light-my-request this repository's overrides pin, whose cookie accepts Node 20", async () => {
    const manifest = JSON.parse(await page('package.json')) as { overrides: Record<string, string> };
    const pinned = manifest.overrides['light-my-request'] as string;
    expect(await page('docs/adapters.md')).toContain(`{ "overrides": { "light-my-request": "${pinned}" } }`);
    // The one Fastify loads, nested under it or hoisted (as when another Fastify is installed too).
    const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
    const installed = JSON.parse(await readFile(join(dirname(fromFastify.resolve('light-my-request')), 'package.json'), 'utf8')) as {
      version: string;
      dependencies: Record<string, string>;
    };
    expect(installed.version).toBe(pinned);
    expect(installed.dependencies.cookie).toMatch(/^\^1\./);
  });
});
