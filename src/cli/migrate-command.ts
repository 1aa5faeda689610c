/**
 * `paygate-auth migrate`: creates or upgrades the PostgreSQL schema of paygate-auth/postgres.
 *
 * @module paygate-auth/cli
 */
import { migrate } from '../postgres/schema.js';
import type { CliCommand } from './command.js';
import { readOptions } from './control-options.js';
import { DATABASE_HELP, withDatabase } from './database-url.js';
import { EXIT } from './run-cli.js';

export const migrateCommand: CliCommand = {
  name: 'migrate',
  summary: 'create or upgrade the PostgreSQL tables (links, idempotency keys, operator controls)',
  help: `Usage: paygate-auth migrate

Creates the tables of paygate-auth/postgres in DATABASE_URL, or upgrades them to this version's
schema. Safe to run again, and from several instances at once: each version is applied once.

${DATABASE_HELP}

Exit codes: 0 done (or nothing to do), 1 the database failed or holds a newer schema, 2 usage.
`,
  async run(args, io) {
    readOptions(args, []);
    const report = await withDatabase(io.env, (db) => migrate(db));
    io.stdout(
      report.applied.length === 0
        ? `The schema is current (version ${report.version}).\n`
        : `Applied schema version${report.applied.length === 1 ? '' : 's'} ${report.applied.join(', ')}; the schema is at version ${report.version}.\n`,
    );
    return EXIT.ok;
  },
};
