// Makes the archive of an empty PGlite data directory that the tests' PGlites start from
// (pglite-data-once.ts): writes it beside its final name, flushes it to disk, then renames it
// into place, so that a reader finds either nothing or the whole archive, after a crash too. On
// failure, writes `<archive>.failed` with the error, which the waiting test files report.
import { closeSync, fsyncSync, openSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { PGlite } from '@electric-sql/pglite';

const archive = process.argv[2];

/** fsync of a file or a directory. */
function flush(path) {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

try {
  const db = new PGlite();
  await db.waitReady;
  const data = await db.dumpDataDir('none');
  await db.close();
  const partial = `${archive}.${process.pid}.partial`;
  writeFileSync(partial, Buffer.from(await data.arrayBuffer()));
  flush(partial);
  renameSync(partial, archive);
  flush(dirname(archive));
} catch (error) {
  writeFileSync(`${archive}.failed`, String(error?.stack ?? error));
  process.exitCode = 1;
}
