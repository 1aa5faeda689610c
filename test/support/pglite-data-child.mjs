// Makes the archive of an empty PGlite data directory that the tests' PGlites start from
// (pglite-data-once.ts): writes it beside its final name, then renames it into place, so that a
// reader finds either nothing or the whole archive. On failure, writes `<archive>.failed` with
// the error, which the waiting test files report.
import { renameSync, writeFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';

const archive = process.argv[2];
try {
  const db = new PGlite();
  await db.waitReady;
  const data = await db.dumpDataDir('none');
  await db.close();
  const partial = `${archive}.${process.pid}.partial`;
  writeFileSync(partial, Buffer.from(await data.arrayBuffer()));
  renameSync(partial, archive);
} catch (error) {
  writeFileSync(`${archive}.failed`, String(error?.stack ?? error));
  process.exitCode = 1;
}
