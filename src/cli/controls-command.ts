/**
 * `paygate-auth controls`: what operator controls are in force, and the recorded actions.
 */
import { capHint, oneLineJson } from '../internal/index.js';
import { foldControls, readControlRecords } from '../postgres/internal.js';
import type { CliCommand } from './command.js';
import { parseOptions } from './cli-options.js';
import { DATABASE_HELP, DATABASE_OPTIONS, databaseTarget, withDatabase } from './database-url.js';
import { EXIT } from './run-cli.js';

/**
 * `date` in ISO 8601, or `null` for a `recorded_at` no date holds (`infinity`, written by hand in
 * `psql`): one such row must not stop the listing of the others.
 */
function isoTime(date: Date): string | null {
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

export const controlsCommand: CliCommand = {
  name: 'controls',
  summary: 'list the operator controls in force and the actions recorded (PostgreSQL)',
  help: `Usage: paygate-auth controls [--json] [--database-url <url>]

Lists the suspended issuers and revoked keys in force, then every recorded action, oldest first.

Options:
  --json  one JSON object: { "suspended": [...], "revoked": [...], "actions": [...] }

${DATABASE_HELP}

Exit codes: 0 listed, 1 the database failed, 2 usage.
`,
  async run(args, io) {
    const options = parseOptions(args, { json: { type: 'boolean' }, ...DATABASE_OPTIONS }, 0);
    const records = await withDatabase(databaseTarget(options, io.env), (db) => readControlRecords(db, db.statementTimeout));
    const state = foldControls(records);
    if (options.values.json === true) {
      const actions = records.map((record) => ({ ...record, recordedAt: isoTime(record.recordedAt) }));
      io.stdout(`${oneLineJson({ suspended: state.suspended, revoked: state.revoked, actions })}\n`);
      return EXIT.ok;
    }
    const lines = [
      'Suspended issuers:',
      ...(state.suspended.length === 0 ? ['  (none)'] : state.suspended.map((issuer) => `  ${capHint(issuer)}`)),
      'Revoked keys:',
      ...(state.revoked.length === 0 ? ['  (none)'] : state.revoked.map(({ issuer, kid }) => `  ${capHint(issuer)}  ${capHint(kid)}`)),
      'Actions recorded:',
      ...(records.length === 0
        ? ['  (none)']
        : records.map(
            (record) =>
              `  #${record.id}  ${isoTime(record.recordedAt) ?? 'no valid time'}  ${record.action.padEnd(14)}  ${capHint(record.issuer)}${record.kid === null ? '' : `  ${capHint(record.kid)}`}`,
          )),
    ];
    io.stdout(`${lines.join('\n')}\n`);
    return EXIT.ok;
  },
};
