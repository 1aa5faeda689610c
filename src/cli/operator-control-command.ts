/**
 * What the commands recording an operator control share: read `--issuer` (and `--kid`), record
 * the action in DATABASE_URL (which notifies every attached instance), and say what was done.
 *
 * @module paygate-auth/cli
 */
import { type ControlAction, type ControlRecord, checkControlRequest, recordControl } from '../postgres/index.js';
import { type CliCommand, UsageError } from './command.js';
import { readOptions, required } from './control-options.js';
import { DATABASE_HELP, withDatabase } from './database-url.js';
import { EXIT } from './run-cli.js';

/** How one command is described. */
export interface ControlCommandSpec {
  readonly name: string;
  readonly action: ControlAction;
  readonly summary: string;
  /** What the action does, for `--help`. */
  readonly effect: string;
  /** The line printed once recorded. */
  readonly done: (record: ControlRecord) => string;
}

/** A command recording `spec.action`. */
export function controlCommand(spec: ControlCommandSpec): CliCommand {
  const withKid = spec.action === 'revoke_key';
  const usage = `paygate-auth ${spec.name} --issuer <iss>${withKid ? ' --kid <kid>' : ''}`;
  return {
    name: spec.name,
    summary: spec.summary,
    help: `Usage: ${usage}

${spec.effect}
Every gateway instance attached to the database (postgresControls) applies it within a second,
cached results and verifications in flight included; instances started later load it.

Options:
  --issuer <iss>  the issuer as registered (its iss), e.g. https://auth.acme.example${withKid ? '\n  --kid <kid>     the key id (kid) of the key' : ''}

${DATABASE_HELP}

Exit codes: 0 recorded, 1 the database failed, 2 usage.
`,
    async run(args, io) {
      const options = readOptions(args, withKid ? ['issuer', 'kid'] : ['issuer']);
      const request = withKid
        ? { action: spec.action, issuer: required(options, 'issuer'), kid: required(options, 'kid') }
        : { action: spec.action, issuer: required(options, 'issuer') };
      try {
        checkControlRequest(request, spec.name);
      } catch (error) {
        throw new UsageError(error instanceof Error ? error.message.replace(`${spec.name}: `, '') : String(error));
      }
      const record = await withDatabase(io.env, (db) => recordControl(db, request));
      io.stdout(`${spec.done(record)} (control #${record.id}, ${record.recordedAt.toISOString()}).\n`);
      return EXIT.ok;
    },
  };
}
