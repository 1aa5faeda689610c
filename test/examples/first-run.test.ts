/**
 * The first run of `npm run example`: the build step says one line (its tool's output only when it
 * fails), PORT picks the port, and a port already taken is one clear line and exit code 1.
 */
import { execFile, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { type Server, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../postgres/eventually.js';
import { PATIENCE_MS } from '../support/loaded-machine.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const scratch: string[] = [];

function scratchDirectory(name: string): string {
  const directory = mkdtempSync(join(tmpdir(), `paygate-${name}-`));
  scratch.push(directory);
  return directory;
}

afterAll(() => {
  for (const directory of scratch) rmSync(directory, { recursive: true, force: true });
});

/** Runs the gateway until it prints its request-log heading or exits; then stops it. */
function startGateway(port: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['examples/gateway/server.mjs'], {
    cwd: root,
    env: { ...process.env, PORT: port, PAYGATE_EXAMPLE_STATE_DIR: scratchDirectory('first-run-state') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    if (/^Request log/m.test(stdout)) child.kill('SIGTERM');
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

function listeningOn(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : 0);
    }),
  );
}

describe('the example gateway at start-up', () => {
  beforeAll(() => {
    if (!existsSync(join(root, 'dist', 'payment-links', 'index.js'))) throw new Error('dist/ is missing: run `npm run build` first');
  });

  it('listens on the port PORT names', async () => {
    const probe = createServer();
    const port = await listeningOn(probe);
    await new Promise((resolve) => probe.close(resolve));
    const { stdout } = await startGateway(String(port));
    expect(stdout).toMatch(new RegExp(`^ {2}gateway +http://127\\.0\\.0\\.1:${port}$`, 'm'));
  });

  it('says in one line that a taken port is in use, names PORT, and exits with 1', async () => {
    const blocker = createServer();
    const port = await listeningOn(blocker);
    try {
      const { code, stdout, stderr } = await startGateway(String(port));
      expect(code).toBe(1);
      expect(stdout).toBe('');
      expect(stderr.trim().split('\n')).toEqual([`port ${port} is in use: set PORT=… to pick another (PORT=0 picks any free port)`]);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('refuses a PORT that is not a port number, naming PORT', async () => {
    const { code, stderr } = await startGateway('http');
    expect(code).toBe(2);
    expect(stderr).toMatch(/^PORT must be a port number/);
  });
});

describe('the build step of npm run example', () => {
  /**
   * A project shaped like this one, whose build prints 90 lines and tsup's stage lines (in colour,
   * as tsup prints them under CI=true, when `coloured`), and writes dist/. Each build adds a line
   * to `builds.log` when it starts; with `held`, it then waits for a file `release` to appear.
   */
  function fakeProject(buildSucceeds: boolean, coloured = false, held = false): string {
    const project = scratchDirectory('ensure-build');
    mkdirSync(join(project, 'examples'));
    mkdirSync(join(project, 'src'));
    for (const file of ['ensure-build.mjs', 'build-lock.mjs']) copyFileSync(join(root, 'examples', file), join(project, 'examples', file));
    writeFileSync(join(project, 'src', 'index.ts'), 'export {};\n');
    const entries = [
      'index',
      'payment-links/index',
      'testing/index',
      'fetch/index',
      'express/index',
      'fastify/index',
      'koa/index',
      'postgres/index',
    ];
    const build = [
      "require('node:fs').appendFileSync('builds.log', 'build\\n');",
      held
        ? `for (const end = Date.now() + ${PATIENCE_MS}; !require('node:fs').existsSync('release') && Date.now() < end; ) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);`
        : '',
      "for (let i = 1; i <= 90; i++) console.log('build output line ' + i);",
      `const tag = (name) => ${coloured ? "'\\x1b[34m' + name + '\\x1b[39m'" : 'name'};`,
      "console.log(tag('ESM') + ' Build start'); console.log(tag('ESM') + ' ⚡️ Build success in 812ms'); console.error(tag('DTS') + ' ⚡️ Build success in 9000ms');",
      "const fs = require('node:fs');",
      `for (const name of ${JSON.stringify(entries)}) { fs.mkdirSync('dist/' + name.replace(/[^/]+$/, ''), { recursive: true }); fs.writeFileSync('dist/' + name + '.js', ''); }`,
      buildSucceeds ? '' : "console.error('build error: something is wrong'); process.exit(3);",
    ].join('\n');
    writeFileSync(join(project, 'build.cjs'), build);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'fake', private: true, scripts: { build: 'node build.cjs' } }));
    return project;
  }

  const ensureBuild = (project: string) => run(process.execPath, [join(project, 'examples', 'ensure-build.mjs')], { cwd: project });

  /** The build step started in `project`, its stderr kept as it comes. */
  function startEnsureBuild(project: string): { stderr: () => string; exited: Promise<number | null> } {
    const child = spawn(process.execPath, [join(project, 'examples', 'ensure-build.mjs')], {
      cwd: project,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    return { stderr: () => stderr, exited: new Promise((resolve) => child.once('exit', resolve)) };
  }

  it('builds once for two runs started together: the second waits for the first, then finds dist/ current', async () => {
    const project = fakeProject(true, false, true);
    const release = () => writeFileSync(join(project, 'release'), '');
    try {
      const first = startEnsureBuild(project);
      await eventually('the first run builds', () => existsSync(join(project, 'builds.log')));
      const second = startEnsureBuild(project);
      await eventually('the second run waits', () => second.stderr().includes('Waiting for the build of paygate-auth under way'));
      release();
      expect(await first.exited).toBe(0);
      expect(await second.exited).toBe(0);
      expect(readFileSync(join(project, 'builds.log'), 'utf8')).toBe('build\n');
      expect(second.stderr()).not.toContain('Building paygate-auth');
      expect(existsSync(join(project, '.tmp', 'build.lock'))).toBe(false);
    } finally {
      release(); // a build still held (a failure above) ends
    }
  });

  it('builds a missing dist/ showing its progress stage by stage on stderr, and hides the rest of the build output', async () => {
    const project = fakeProject(true);
    const { stdout, stderr } = await ensureBuild(project);
    expect(stdout).toBe('');
    const lines = stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^Building paygate-auth \(dist\/ is missing or out of date\)/);
    expect(lines.slice(1, -1).map((line) => line.replace(/\(\d+\.\d s\)/, '(…)'))).toEqual([
      '  ESM started (…)',
      '  ESM done (…)',
      '  DTS done (…)',
    ]);
    expect(lines.at(-1)).toMatch(/^Built paygate-auth in \d+\.\d s$/);
    expect(stderr).not.toContain('build output line');
    expect(existsSync(join(project, 'dist', 'koa', 'index.js'))).toBe(true);
  });

  it("shows the stages when the build colours its lines (tsup's under CI=true)", async () => {
    const { stderr } = await ensureBuild(fakeProject(true, true));
    expect(stderr.match(/^ {2}\w+ (started|done)/gm)).toEqual(['  ESM started', '  ESM done', '  DTS done']);
  });

  it('says nothing when dist/ is current', async () => {
    const project = fakeProject(true);
    await ensureBuild(project);
    const { stdout, stderr } = await ensureBuild(project);
    expect(stdout + stderr).toBe('');
  });

  it('rebuilds nothing when a source file is touched but unchanged (dist/ is current by content)', async () => {
    const project = fakeProject(true);
    await ensureBuild(project);
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(project, 'src', 'index.ts'), later, later);
    const { stdout, stderr } = await ensureBuild(project);
    expect(stdout + stderr).toBe('');
  });

  it('rebuilds when a source file changes, whatever the dates say', async () => {
    const project = fakeProject(true);
    await ensureBuild(project);
    const earlier = new Date(Date.now() - 3_600_000);
    writeFileSync(join(project, 'src', 'index.ts'), 'export const changed = 1;\n');
    utimesSync(join(project, 'src', 'index.ts'), earlier, earlier);
    const { stderr } = await ensureBuild(project);
    expect(stderr).toMatch(/^Building paygate-auth/);
  });

  it('rebuilds when dist/ was built by hand after the recorded build (from sources it cannot know)', async () => {
    const project = fakeProject(true);
    await ensureBuild(project);
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(project, 'dist', 'index.js'), later, later);
    const { stderr } = await ensureBuild(project);
    expect(stderr).toMatch(/^Building paygate-auth/);
  });

  it('shows the build output, and exits with its status, when the build fails', async () => {
    const project = fakeProject(false);
    const failure = await ensureBuild(project).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(3);
    expect(failure?.stderr).toContain('failed:');
    expect(failure?.stderr).toContain('build output line 90');
    expect(failure?.stderr).toContain('build error: something is wrong');
  });
});
