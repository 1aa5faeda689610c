/**
 * `paygate-auth controls`: what operator controls are in force, and the recorded actions.
 */
import { foldControls, readControlRecords } from '../postgres/internal.js';
import type { CliCommand } from './command.js';
import { parseOptions } from './cli-options.js';
import { DATABASE_HELP, DATABASE_OPTIONS, databaseTarget, withDatabase } from './database-url.js';
import { EXIT } from './run-cli.js';

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
    const records = await withDatabase(databaseTarget(options, io.env), (db) => readControlRecords(db));
    const state = foldControls(records);
    if (options.values.json === true) {
      const actions = records.map((record) => ({ ...record, recordedAt: record.recordedAt.toISOString() }));
      io.stdout(`${JSON.stringify({ suspended: state.suspended, revoked: state.revoked, actions }, null, 2)}\n`);
      return EXIT.ok;
    }
    const lines = [
      'Suspended issuers:',
      ...(state.suspended.length === 0 ? ['  (none)'] : state.suspended.map((issuer) => `  ${issuer}`)),
      'Revoked keys:',
      ...(state.revoked.length === 0 ? ['  (none)'] : state.revoked.map(({ issuer, kid }) => `  ${issuer}  ${kid}`)),
      'Actions recorded:',
      ...(records.length === 0
        ? ['  (none)']
        : records.map(
            (record) =>
              `  #${record.id}  ${record.recordedAt.toISOString()}  ${record.action.padEnd(14)}  ${record.issuer}${record.kid === null ? '' : `  ${record.kid}`}`,
          )),
    ];
    io.stdout(`${lines.join('\n')}\n`);
    return EXIT.ok;
  },
};
