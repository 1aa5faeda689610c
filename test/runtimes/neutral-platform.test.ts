/**
 * No Node built-in on a Web path: the Web entries of the built package (the root, `./fetch`,
 * `./issuer` without `FileKeyStore`, `./testing` without the loopback server) bundle for esbuild's
 * neutral platform with none. Needs the build (`npm test` runs it first).
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { nodeBuiltinsOnWebPaths } from './neutral-platform.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const nodeModules = join(root, 'node_modules');
const fixtures: string[] = [];

afterAll(() => Promise.all(fixtures.map((dir) => rm(dir, { recursive: true, force: true }))));

/** A copy of the built package, with `edit` applied to one of its files. */
async function fixtureBuild(file: string, edit: (source: string) => string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'paygate-neutral-'));
  fixtures.push(dir);
  await cp(join(root, 'package.json'), join(dir, 'package.json'));
  await cp(join(root, 'dist'), join(dir, 'dist'), { recursive: true });
  const path = join(dir, file);
  const source = await readFile(path, 'utf8');
  const edited = edit(source);
  expect(edited).not.toBe(source);
  await writeFile(path, edited);
  return dir;
}

describe('the neutral-platform check', () => {
  it('finds no Node built-in in the Web entries of the built package', async () => {
    expect(await nodeBuiltinsOnWebPaths(root, nodeModules)).toEqual([]);
  });

  it('fails the fetch entry when a fixture build adds a Node-only import to it', async () => {
    const dir = await fixtureBuild(
      'dist/fetch/index.js',
      (source) =>
        `import { Buffer } from 'node:buffer';\n${source.replace('new Response(JSON.stringify(body)', 'new Response(Buffer.from(JSON.stringify(body))')}`,
    );
    expect(await nodeBuiltinsOnWebPaths(dir, nodeModules)).toEqual([
      { subpath: './fetch', builtin: 'node:buffer', kind: 'import-statement' },
    ]);
  });

  it("finds FileKeyStore's node:fs/promises when the issuer entry is bundled whole", async () => {
    const found = await nodeBuiltinsOnWebPaths(root, nodeModules, [{ subpath: './issuer' }]);
    expect(found).toContainEqual({ subpath: './issuer', builtin: 'node:fs/promises', kind: 'dynamic-import' });
  });

  it("finds the loopback server's node:http when the testing entry allows it no dynamic import", async () => {
    const found = await nodeBuiltinsOnWebPaths(root, nodeModules, [{ subpath: './testing', without: ['serveJwks'] }]);
    expect(found).toEqual([{ subpath: './testing', builtin: 'node:http', kind: 'dynamic-import' }]);
  });
});
