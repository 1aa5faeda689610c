/**
 * The package as published: `npm pack` (one pack shared by the run), unpacked into a node_modules of its own (its runtime
 * dependency and the optional peers linked from this repository's node_modules), then loaded by
 * plain node through `require()` and `import()`. A second project holds only what
 * `npm i paygate-auth fastify` installs: the package, its runtime dependencies and fastify.
 * Needs the build (`npm test` runs it first).
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, symlink } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PackedPackage, packedPackage } from '../support/packed-package.js';
import { ALLOWED_FRAMEWORKS, EXPECTED_EXPORTS, FRAMEWORKS, LINKED_PACKAGES, RUNTIME_PACKAGES } from './fixtures.js';
import { PATIENCE_MS } from '../support/loaded-machine.js';

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const SUBPATHS = Object.keys(EXPECTED_EXPORTS);
const MODES = ['require', 'import'] as const;

let workdir: string;
let unpacked: string;
let fastifyProject: string;

/** A project holding the shared pack (see test/support/pack-once.ts) and the linked packages. */
async function packAndUnpack(): Promise<void> {
  workdir = await mkdtemp(join(tmpdir(), 'paygate-auth-pack-'));
  const modules = join(workdir, 'node_modules');
  await mkdir(modules);
  unpacked = join(modules, 'paygate-auth');
  await cp((packedPackage() as PackedPackage).unpacked, unpacked, { recursive: true });
  for (const name of LINKED_PACKAGES) {
    await mkdir(dirname(join(modules, name)), { recursive: true });
    await symlink(join(root, 'node_modules', name), join(modules, name), 'dir');
  }
  await cp(join(here, 'probe.cjs'), join(workdir, 'probe.cjs'));
  await cp(join(here, 'burst-probe.cjs'), join(workdir, 'burst-probe.cjs'));
  await makeFastifyProject();
}

/** A project as `npm i paygate-auth fastify` leaves it: the package, its `dependencies` and fastify. */
async function makeFastifyProject(): Promise<void> {
  fastifyProject = join(workdir, 'fastify-project');
  const modules = join(fastifyProject, 'node_modules');
  await mkdir(modules, { recursive: true });
  await cp(unpacked, join(modules, 'paygate-auth'), { recursive: true });
  const manifest = JSON.parse(await readFile(join(unpacked, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
  };
  for (const name of [...Object.keys(manifest.dependencies ?? {}), 'fastify']) {
    await mkdir(dirname(join(modules, name)), { recursive: true });
    await symlink(join(root, 'node_modules', name), join(modules, name), 'dir');
  }
  await cp(join(here, 'fastify-probe.cjs'), join(fastifyProject, 'fastify-probe.cjs'));
}

const probes = new Map<string, Promise<Record<string, unknown>>>();

/** What `probe.cjs` reports of loading `target` with `mode` in a fresh node process (once per pair). */
function probe(mode: (typeof MODES)[number], target: string): Promise<Record<string, unknown>> {
  const key = `${mode} ${target}`;
  let result = probes.get(key);
  if (result === undefined) {
    result = spawnProbe(mode, target);
    probes.set(key, result);
  }
  return result;
}

async function spawnProbe(mode: (typeof MODES)[number], target: string): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, [join(workdir, 'probe.cjs'), mode, target], {
    cwd: workdir,
    env: { ...process.env, PROBE_FRAMEWORKS: JSON.stringify(FRAMEWORKS), PROBE_SUBPATHS: JSON.stringify(SUBPATHS) },
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

/** Bare specifiers reachable from `file` through its relative imports (ESM) or requires (CJS). */
async function bareImports(file: string, seen = new Set<string>()): Promise<Set<string>> {
  const found = new Set<string>();
  if (seen.has(file)) return found;
  seen.add(file);
  const source = await readFile(file, 'utf8');
  const specifiers = [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)['"]([^'"]+)['"]/g)].map(
    (match) => match[1] as string,
  );
  for (const specifier of specifiers) {
    if (specifier.startsWith('.')) for (const name of await bareImports(resolve(dirname(file), specifier), seen)) found.add(name);
    else found.add(specifier);
  }
  return found;
}

async function entryFile(subpath: string, mode: (typeof MODES)[number]): Promise<string> {
  const { exports } = JSON.parse(await readFile(join(unpacked, 'package.json'), 'utf8')) as {
    exports: Record<string, Record<string, { default: string }>>;
  };
  const target = exports[`.${subpath.slice('paygate-auth'.length)}`]?.[mode]?.default;
  if (target === undefined) throw new Error(`package.json#exports has no ${mode} entry for ${subpath}`);
  return join(unpacked, target);
}

describe.skipIf(packedPackage() === null)('the packed package', () => {
  beforeAll(packAndUnpack);
  afterAll(async () => {
    if (workdir !== undefined) await rm(workdir, { recursive: true, force: true });
  });

  it('holds only dist, docs, the README, the changelog and package.json', async () => {
    const entries = await readdir(unpacked);
    expect(entries.filter((name) => !['dist', 'docs', 'package.json', 'README.md', 'CHANGELOG.md', 'LICENSE'].includes(name))).toEqual([]);
  });

  it('carries the text of the licence package.json declares', async () => {
    const { license } = JSON.parse(await readFile(join(unpacked, 'package.json'), 'utf8')) as { license: string };
    const text = await readFile(join(unpacked, 'LICENSE'), 'utf8');
    expect(license).toBe('MIT');
    expect(text.split('\n', 1)[0]).toBe(`${license} License`);
  });

  it('carries every document the README links to', async () => {
    const readme = await readFile(join(unpacked, 'README.md'), 'utf8');
    const targets = [...readme.matchAll(/\]\(([^)\s]+)\)/g)]
      .map((match) => (match[1] ?? '').split('#')[0] ?? '')
      .filter((target) => target !== '' && !/^[a-z][a-z0-9+.-]*:/i.test(target));
    expect(targets.length).toBeGreaterThan(0);
    const missing = [];
    for (const target of new Set(targets)) {
      if (
        !(await readFile(join(unpacked, decodeURIComponent(target))).then(
          () => true,
          () => false,
        ))
      )
        missing.push(target);
    }
    expect(missing).toEqual([]);
  });

  describe.each(MODES)('in a project holding only paygate-auth, its dependencies and fastify, with %s()', (mode) => {
    it('loads paygate-auth/fastify, and its plugin answers a request without a token with 401', async () => {
      const { stdout } = await run(process.execPath, ['fastify-probe.cjs', mode], { cwd: fastifyProject });
      expect(JSON.parse(stdout)).toEqual({ status: 401, code: 'missing_token' });
    });
  });

  it("require('paygate-auth/fastify') is one documented object: paygateAuth (also as default), authOf, requireScopes", async () => {
    const script = [
      "const m = require('paygate-auth/fastify');",
      'process.stdout.write(JSON.stringify({ type: typeof m, keys: Object.keys(m).sort(), plugin: typeof m.paygateAuth, same: m.default === m.paygateAuth }));',
    ].join('\n');
    const { stdout } = await run(process.execPath, ['-e', script], { cwd: workdir });
    expect(JSON.parse(stdout)).toEqual({
      type: 'object',
      keys: ['authOf', 'default', 'paygateAuth', 'requireScopes'],
      plugin: 'function',
      same: true,
    });
  });

  describe.each(MODES)('loaded with %s()', (mode) => {
    it.each(SUBPATHS)('offers the expected exports from %s', async (subpath) => {
      const { exports } = await probe(mode, subpath);
      expect(exports).toEqual(expect.arrayContaining([...(EXPECTED_EXPORTS[subpath] ?? [])]));
    });

    it.each(SUBPATHS)('loads no framework but its own when %s is imported alone', async (subpath) => {
      const { frameworks } = (await probe(mode, subpath)) as { frameworks: string[] };
      const foreign = frameworks.filter((name) => !(ALLOWED_FRAMEWORKS[subpath] ?? []).includes(name));
      expect(foreign).toEqual([]);
    });

    it.each(SUBPATHS)(
      'statically imports no framework but its own, and no package but its runtime dependencies, from %s',
      async (subpath) => {
        const packages = [...(await bareImports(await entryFile(subpath, mode)))].filter((name) => !isBuiltin(name));
        const isFramework = (name: string) => (FRAMEWORKS as readonly string[]).some((fw) => name === fw || name.startsWith(`${fw}/`));
        const allowed = ALLOWED_FRAMEWORKS[subpath] ?? [];
        expect(packages.filter((name) => isFramework(name) && !allowed.includes(name))).toEqual([]);
        expect(
          packages.filter(
            (name) =>
              !isFramework(name) && !RUNTIME_PACKAGES.some((dependency) => name === dependency || name.startsWith(`${dependency}/`)),
          ),
        ).toEqual([]);
      },
    );

    it('verifies bursts of distinct tokens (in the thread pool), then lets the process exit on its own', async () => {
      const { stdout } = await run(process.execPath, [join(workdir, 'burst-probe.cjs'), mode], {
        cwd: workdir,
        timeout: PATIENCE_MS,
      });
      expect(JSON.parse(stdout)).toEqual({ first: { valid: 64, tampered: 0 }, second: { valid: 64, tampered: 0 } });
    });

    it('throws one AuthError class, whichever subpath raised it', async () => {
      const { authErrors } = (await probe(mode, 'all')) as {
        authErrors: Record<string, { code: string; sameClass: boolean }>;
      };
      expect(authErrors).toEqual({
        fetch: { code: 'missing_token', sameClass: true },
        express: { code: 'missing_token', sameClass: true },
        koa: { code: 'missing_token', sameClass: true },
        hono: { code: 'missing_token', sameClass: true },
        fastify: { code: 'missing_token', sameClass: true },
        testing: { code: 'malformed_token', sameClass: true },
      });
    });
  });

  // `module: commonjs` alone means node10 resolution before TypeScript 6 (ts-jest's usual set-up):
  // it reads no `exports`, so a subpath's types must be found another way (`typesVersions`).
  it.each(SUBPATHS)("resolves %s to its CommonJS declarations under TypeScript's node10 resolution", (subpath) => {
    const consumer = join(workdir, 'consumer.ts');
    const { resolvedModule } = ts.resolveModuleName(
      subpath,
      consumer,
      { module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10 },
      ts.sys,
    );
    expect(resolvedModule?.resolvedFileName).toMatch(/\/dist\/[\w/-]+\.d\.cts$/);
  });

  it('makes the fastify plugin load the fastify-plugin wrapper and not fastify itself', async () => {
    const { frameworks } = (await probe('require', 'paygate-auth/fastify')) as { frameworks: string[] };
    expect(frameworks).toEqual(['fastify-plugin']);
  });
});
