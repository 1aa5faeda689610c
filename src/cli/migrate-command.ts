/**
 * `paygate-auth migrate`: creates or upgrades the PostgreSQL schema of paygate-auth/postgres,
 * every area or one of them, and sets up the roles of least privilege when asked.
 */
import { type MigrateOptions, type SchemaArea, migrate } from '../postgres/index.js';
import { quote } from '../internal/index.js';
import { DEFAULT_ROLES, SCHEMA_AREAS } from '../postgres/internal.js';
import { type CliCommand, UsageError } from './command.js';
import { type ParsedOptions, parseOptions, stringValue } from './cli-options.js';
import { DATABASE_HELP, DATABASE_OPTIONS, databaseTarget, withDatabase } from './database-url.js';
import { EXIT } from './run-cli.js';

function readArea(value: string | undefined): SchemaArea | undefined {
  if (value === undefined) return undefined;
  if (!(SCHEMA_AREAS as readonly string[]).includes(value))
    throw new UsageError(`--only must be one of ${SCHEMA_AREAS.join(', ')}, got ${quote(value)}`);
  return value as SchemaArea;
}

/** The `roles` option: `--roles`, or a role name (which implies it). */
function readRoles(parsed: ParsedOptions): MigrateOptions['roles'] {
  const gateway = stringValue(parsed, 'gateway-role');
  const operator = stringValue(parsed, 'operator-role');
  if (parsed.values.roles !== true && gateway === undefined && operator === undefined) return undefined;
  return { ...(gateway === undefined ? {} : { gateway }), ...(operator === undefined ? {} : { operator }) };
}

const OPTIONS = {
  only: { type: 'string' },
  roles: { type: 'boolean' },
  'gateway-role': { type: 'string' },
  'operator-role': { type: 'string' },
  ...DATABASE_OPTIONS,
} as const;

export const migrateCommand: CliCommand = {
  name: 'migrate',
  summary: 'create or upgrade the PostgreSQL tables (links, operator controls, directory, issuer registry, key history, fleet)',
  help: `Usage: paygate-auth migrate [--only links|controls|directory|registry|keys|fleet] [--roles] [--database-url <url>]

Creates the tables of paygate-auth/postgres in the database (--database-url or DATABASE_URL), or
upgrades them to this version's schema. Safe to run again, and from several instances at once:
each version is applied once.

Options:
  --only <area>           one area alone: links (payment links and idempotency keys), controls
                          (operator controls), directory (departments, stores, shoppers), registry
                          (trusted issuers and their audit trail), keys (the issuers' key
                          history) or fleet (a heartbeat row per instance). Default: every area.
  --roles                 also set up the two roles of least privilege, granted what they may do
                          in the areas migrated: the gateway's (reads the registry and the
                          controls; writes links, idempotency keys, the directory, the key
                          history, its heartbeat) and the operator's (writes the registry and
                          the controls).
                          Missing ones are created NOLOGIN (this needs CREATEROLE); grant them to
                          the roles that log in. Run it again after each upgrade.
  --gateway-role <name>   the gateway's role (default ${DEFAULT_ROLES.gateway}); implies --roles
  --operator-role <name>  the operator's role (default ${DEFAULT_ROLES.operator}); implies --roles

${DATABASE_HELP}

Exit codes: 0 done (or nothing to do), 1 the database failed, holds a newer schema, or may not
create a role, 2 usage.
`,
  async run(args, io) {
    const parsed = parseOptions(args, OPTIONS, 0);
    const only = readArea(stringValue(parsed, 'only'));
    const roles = readRoles(parsed);
    const options: MigrateOptions = { ...(only === undefined ? {} : { only }), ...(roles === undefined ? {} : { roles }) };
    const report = await withDatabase(databaseTarget(parsed, io.env), (db) =>
      migrate(db, { ...options, statementTimeout: db.statementTimeout }).catch((error: unknown) => {
        // A bad role name is the command line's mistake.
        if (error instanceof TypeError)
          throw new UsageError(
            error.message.replace('migrate: roles.gateway', '--gateway-role').replace('migrate: roles.operator', '--operator-role'),
          );
        throw error;
      }),
    );
    const versions = Object.entries(report.versions)
      .map(([area, version]) => `${area} ${version}`)
      .join(', ');
    io.stdout(
      report.applied.length === 0
        ? `The schema is current (${versions}).\n`
        : `Applied ${report.applied.map(({ area, version }) => `${area} ${version}`).join(', ')}; the schema is at ${versions}.\n`,
    );
    if (report.roles !== undefined) {
      const { gateway, operator, created } = report.roles;
      const made = (role: string) => (created.includes(role) ? ', created' : '');
      io.stdout(
        `Roles granted: ${gateway} (the gateway's${made(gateway)}), ${operator} (the operator's${made(operator)}). Grant each to the roles that log in: GRANT ${gateway} TO <gateway login>; GRANT ${operator} TO <operator login>.\n`,
      );
    }
    return EXIT.ok;
  },
};
