/**
 * A throw-away PostgreSQL server for the benchmarks (`initdb` + `pg_ctl` into a temporary
 * directory, as the tests start one; run as the `postgres` user when run as root).
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

function pgBinaries() {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  if (existsSync('/usr/lib/postgresql')) {
    for (const version of readdirSync('/usr/lib/postgresql').sort((x, y) => Number(y) - Number(x)))
      dirs.push(join('/usr/lib/postgresql', version, 'bin'));
  }
  return dirs.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')));
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** A throw-away server: `{ url, where, stop() }`, or `null` without the binaries. */
export async function throwAwayServer() {
  const bin = pgBinaries();
  if (bin === undefined) return null;
  const asRoot = process.getuid?.() === 0;
  const root = mkdtempSync(join(tmpdir(), 'paygate-bench-pg-'));
  if (asRoot) chownSync(root, Number(execFileSync('id', ['-u', 'postgres'])), Number(execFileSync('id', ['-g', 'postgres'])));
  const exec = (binary, args) => {
    const path = join(bin, binary);
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args];
    execFileSync(file, argv, { stdio: 'ignore' });
  };
  const data = join(root, 'data');
  const port = await freePort();
  exec('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C']);
  exec('pg_ctl', ['-D', data, '-o', `-p ${port} -k ${root} -c listen_addresses=127.0.0.1`, '-l', join(root, 'log'), '-w', 'start']);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    where: 'a throw-away local server (default settings: fsync on)',
    stop() {
      exec('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A throw-away server, or, without the binaries, a line saying the bench is skipped and exit 0. */
export async function throwAwayServerOrSkip() {
  const server = await throwAwayServer();
  if (server !== null) return server;
  console.log('skipped: initdb and pg_ctl were not found');
  process.exit(0);
}
