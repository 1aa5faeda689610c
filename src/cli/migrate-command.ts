/**
 * `paygate-auth migrate`: creates or upgrades the PostgreSQL schema of paygate-auth/postgres,
 * every area or one of them.
 */
import { SCHEMA_AREAS, type SchemaArea, migrate } from '../postgres/index.js';
import { type CliCommand, UsageError } from './command.js';
import { parseOptions, stringValue } from './cli-options.js';
import { DATABASE_HELP, withDatabase } from './database-url.js';
import { EXIT } from './run-cli.js';

function readArea(value: string | undefined): SchemaArea | undefined {
  if (value === undefined) return undefined;
  if (!(SCHEMA_AREAS as readonly string[]).includes(value))
    throw new UsageError(`--only must be one of ${SCHEMA_AREAS.join(', ')}, got ${JSON.stringify(value)}`);
  return value as SchemaArea;
}

export const migrateCommand: CliCommand = {
  name: 'migrate',
  summary: 'create or upgrade the PostgreSQL tables (links, operator controls, directory, issuer registry, key history)',
  help: `Usage: paygate-auth migrate [--only links|controls|directory|registry|keys]

Creates the tables of paygate-auth/postgres in DATABASE_URL, or upgrades them to this version's
schema. Safe to run again, and from several instances at once: each version is applied once.

Options:
  --only <area>  one area alone: links (payment links and idempotency keys), controls (operator
                 controls), directory (departments, stores, shoppers), registry (trusted
                 issuers and their audit trail) or keys (the issuers' key history). Default:
                 every area.

${DATABASE_HELP}

Exit codes: 0 done (or nothing to do), 1 the database failed or holds a newer schema, 2 usage.
`,
  async run(args, io) {
    const only = readArea(stringValue(parseOptions(args, { only: { type: 'string' } }, 0), 'only'));
    const report = await withDatabase(io.env, (db) => migrate(db, only === undefined ? {} : { only }));
    const versions = Object.entries(report.versions)
      .map(([area, version]) => `${area} ${version}`)
      .join(', ');
    io.stdout(
      report.applied.length === 0
        ? `The schema is current (${versions}).\n`
        : `Applied ${report.applied.map(({ area, version }) => `${area} ${version}`).join(', ')}; the schema is at ${versions}.\n`,
    );
    return EXIT.ok;
  },
};
