/**
 * The package as a consumer installs it: `npm pack` (one pack shared by the run), unpacked into a fresh project's node_modules,
 * its dependencies and the consumer's own packages linked from this repository's node_modules (no
 * network). One project runs the README's test-kit recipe (`examples/testing/app.test.mjs`)
 * verbatim with vitest; one runs the kit under `node --test` (docs/testing.md's test runners);
 * another, without msw, type-checks a consumer of `paygate-auth/testing` against the built
 * declarations. Needs the build (`npm test` runs it first).
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PackedPackage, packedPackage } from '../support/packed-package.js';
import { PATIENCE_MS } from '../support/loaded-machine.js';

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const RECIPE = join(root, 'examples/testing/app.test.mjs');
/**
 * The documents that must carry the recipe verbatim. README.md belongs here once its test-kit
 * section holds the recipe.
 */
const RECIPE_DOCUMENTS = ['README.md', 'docs/testing.md'];
/** The package's runtime dependencies, linked beside it in every project. */
const DEPENDENCIES = ['jose', 'lru-cache', 'fastify-plugin'];

let workdir: string;

/** A fresh project: package.json, the unpacked tarball and `linked` packages in node_modules. */
async function project(name: string, linked: readonly string[]): Promise<string> {
  const dir = join(workdir, name);
  const modules = join(dir, 'node_modules');
  await mkdir(join(modules, '@types'), { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: `consumer-${name}`, private: true, type: 'module' }));
  await cp((packedPackage() as PackedPackage).unpacked, join(modules, 'paygate-auth'), { recursive: true });
  for (const pkg of [...DEPENDENCIES, ...linked]) await symlink(join(root, 'node_modules', pkg), join(modules, pkg), 'dir');
  return dir;
}

/** Runs `node args` in `cwd`; its exit code and output, whether it failed or not. */
async function node(cwd: string, args: readonly string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, args, {
      cwd,
      timeout: 3 * PATIENCE_MS,
      env: { ...process.env, NO_COLOR: '1', CI: '1' },
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return {
      code: typeof failed.code === 'number' ? failed.code : 1,
      output: `${failed.stdout ?? ''}${failed.stderr ?? ''}`,
    };
  }
}

describe.skipIf(packedPackage() === null)('the packed package in a consumer project', () => {
  beforeAll(async () => {
    workdir = await mkdtemp(join(tmpdir(), 'paygate-auth-consumer-'));
  });
  afterAll(async () => {
    if (workdir !== undefined) await rm(workdir, { recursive: true, force: true });
  });

  it(
    "runs the README's test-kit recipe as it stands, with express, supertest and vitest, and no warning",
    async () => {
      const dir = await project('recipe', ['express', 'supertest', 'vitest', 'msw']);
      await cp(RECIPE, join(dir, 'app.test.mjs'));
      const { code, output } = await node(dir, [join(dir, 'node_modules/vitest/vitest.mjs'), 'run', '--root', dir]);
      expect(output).toMatch(/Tests\s+2 passed \(2\)/);
      expect(code).toBe(0);
      expect(output).not.toMatch(/PAYGATE_AUTH_\w+/);
    },
    4 * PATIENCE_MS,
  );

  it(
    'runs the kit under node --test, ESM with mock timers and CommonJS with msw, and the process exits on its own',
    async () => {
      const dir = await project('node-test', ['msw']);
      await writeFile(
        join(dir, 'esm.test.mjs'),
        [
          "import assert from 'node:assert/strict';",
          "import { after, afterEach, before, mock, test } from 'node:test';",
          "import { createTestIssuer, createTestVerifier } from 'paygate-auth/testing';",
          'const issuer = await createTestIssuer();',
          'const verifier = createTestVerifier(issuer);',
          'before(async () => { await issuer.listen(); });',
          'after(() => issuer.close());',
          'afterEach(() => mock.timers.reset());',
          "test('a retired key stops verifying at once', async () => {",
          '  const old = await issuer.token();',
          '  await verifier.verify(old);',
          '  await issuer.rotate({ retire: true });',
          '  await verifier.verify(await issuer.token());',
          "  await assert.rejects(verifier.verify(old), { code: 'unknown_key' });",
          '});',
          "test('a token expires when mock timers move the clock', async () => {",
          '  const token = await issuer.token();',
          "  mock.timers.enable({ apis: ['Date', 'setTimeout'], now: Date.now() });",
          '  mock.timers.tick(60 * 60 * 1000);',
          "  await assert.rejects(verifier.verify(token), { code: 'token_expired' });",
          '});',
          '',
        ].join('\n'),
      );
      await writeFile(
        join(dir, 'cjs.test.cjs'),
        [
          "const assert = require('node:assert/strict');",
          "const { after, before, test } = require('node:test');",
          "const { setupServer } = require('msw/node');",
          "const { createTestIssuer, createTestVerifier } = require('paygate-auth/testing');",
          "const { errorExceptLoopback, jwksHandlers } = require('paygate-auth/testing/msw');",
          'let issuer;',
          'let server;',
          'before(async () => {',
          '  issuer = await createTestIssuer();',
          '  server = setupServer(...jwksHandlers(issuer));',
          '  server.listen({ onUnhandledRequest: errorExceptLoopback });',
          '});',
          'after(() => server.close());',
          "test('require() loads the kit, and msw serves the JWKS', async () => {",
          '  const auth = await createTestVerifier(issuer).verify(await issuer.token());',
          "  assert.equal(auth.tenant.id, 't-1');",
          '  assert.equal(issuer.jwksRequests, 1);',
          '});',
          '',
        ].join('\n'),
      );
      const { code, output } = await node(dir, ['--test', 'esm.test.mjs', 'cjs.test.cjs']);
      expect(output).toMatch(/^# pass 3$/m);
      expect(output).toMatch(/^# fail 0$/m);
      expect(code).toBe(0);
      expect(output).not.toMatch(/PAYGATE_AUTH_\w+/);
    },
    4 * PATIENCE_MS,
  );

  it.each(RECIPE_DOCUMENTS)('%s carries the recipe verbatim', async (document) => {
    const recipe = await readFile(RECIPE, 'utf8');
    expect(await readFile(join(root, document), 'utf8')).toContain(recipe.trim());
  });

  describe('without msw installed', () => {
    let dir: string;
    // The checks share one incremental state: each after the first reuses what the first found of
    // the files they all read (the lib checks of @types/node and of the package), the same
    // diagnostics in a quarter of the CPU. Any run alone checks everything. Resolution is node16,
    // the strictest: under it (and under nodenext before TypeScript 5.8) a CommonJS file may not
    // import an ES module, so a declaration of ours that imports one (jose) fails there.
    const tsc = (file: string) =>
      node(dir, [
        join(root, 'node_modules/typescript/bin/tsc'),
        '--noEmit',
        '--incremental',
        '--tsBuildInfoFile',
        join(dir, 'tsconfig.tsbuildinfo'),
        '--strict',
        '--skipLibCheck',
        'false',
        '--module',
        'node16',
        '--moduleResolution',
        'node16',
        '--target',
        'es2022',
        '--types',
        'node',
        file,
      ]);

    beforeAll(async () => {
      dir = await project('types', []);
      await symlink(join(root, 'node_modules/@types/node'), join(dir, 'node_modules/@types/node'), 'dir');
      await writeFile(
        join(dir, 'consumer.ts'),
        [
          "import { type JwksRequestHandler, type TestIssuer, createTestIssuer, createTestVerifier } from 'paygate-auth/testing';",
          "const issuer: TestIssuer = await createTestIssuer({ audience: 'https://payments.test' });",
          'const handlers: readonly JwksRequestHandler[] = issuer.handlers;',
          'const auth = await createTestVerifier(issuer).verify(await issuer.token());',
          'const tenant: string = auth.tenant.id;',
          'export { handlers, tenant };',
          '',
        ].join('\n'),
      );
      await writeFile(join(dir, 'msw-consumer.ts'), "import { jwksHandlers } from 'paygate-auth/testing/msw';\nexport { jwksHandlers };\n");
      // A CommonJS module (.cts): it reads the CommonJS declarations, which must not import jose (ESM-only).
      await writeFile(
        join(dir, 'issuer-consumer.cts'),
        "import { type SigningKey, createIssuer } from 'paygate-auth/issuer';\nexport const make = createIssuer;\nexport type Key = SigningKey['privateKey'];\n",
      );
    });

    it('type-checks a consumer of paygate-auth/testing against the built declarations, lib checks on', async () => {
      const { code, output } = await tsc('consumer.ts');
      expect(output).toBe('');
      expect(code).toBe(0);
    });

    it('type-checks a CommonJS consumer of paygate-auth/issuer under node16 resolution, lib checks on', async () => {
      const { code, output } = await tsc('issuer-consumer.cts');
      expect(output).toBe('');
      expect(code).toBe(0);
    });

    it('finds msw unresolvable there: paygate-auth/testing/msw, which needs it, fails to type-check', async () => {
      const { code, output } = await tsc('msw-consumer.ts');
      expect(output).toMatch(/TS2307: Cannot find module 'msw'/);
      expect(code).not.toBe(0);
    });
  });
});
