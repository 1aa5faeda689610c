/**
 * `paygate-auth controls compact`: folds the operator-controls table into its current state.
 */
import { compactControls } from '../postgres/internal.js';
import type { CliCommand } from './command.js';
import { parseOptions } from './cli-options.js';
import { DATABASE_HELP, DATABASE_OPTIONS, databaseTarget, requireKnownSchema, withDatabase } from './database-url.js';
import { EXIT } from './run-cli.js';

export const controlsCompactCommand: CliCommand = {
  name: 'controls compact',
  summary: 'fold the operator-controls table into one row per control in force (PostgreSQL)',
  help: `Usage: paygate-auth controls compact [--database-url <url>]

Keeps one row per revoked key and one per suspended issuer, and deletes every other action
(resumptions, repeated actions, key refreshes already broadcast). Instances read only the
actions after the last one they applied; one that had not read up to the compaction reads the
compacted table whole. Every instance also compacts on a schedule (postgresControls'
compactInterval). Safe to run at any time, from anywhere.

${DATABASE_HELP}

Exit codes: 0 compacted, 1 the database failed, 2 usage.
`,
  async run(args, io) {
    const parsed = parseOptions(args, DATABASE_OPTIONS, 0);
    const report = await withDatabase(databaseTarget(parsed, io.env), async (db) => {
      await requireKnownSchema(db, ['controls']);
      return compactControls(db, db.statementTimeout);
    });
    io.stdout(`Compacted the operator controls: ${report.deleted} row${report.deleted === 1 ? '' : 's'} deleted, ${report.kept} kept.\n`);
    return EXIT.ok;
  },
};
