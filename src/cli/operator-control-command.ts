/**
 * The commands recording an operator control (`revoke-key`, `suspend-issuer`, `resume-issuer`,
 * `refresh-keys`), one row of a table each: read `--issuer` (and `--kid`), refuse an issuer the
 * registry table does not register (unless `--force`), record the action in the database
 * (`--database-url` or DATABASE_URL, which notifies every attached instance), and say what was done.
 */
import { nearestName, quote, quoteList } from '../internal/index.js';
import type { ControlRecord } from '../postgres/index.js';
import {
  type ControlAction,
  checkControlRequest,
  foldControls,
  isMissingTable,
  readControlRecords,
  readKeyHistory,
  recordControl,
} from '../postgres/internal.js';
import { type CliCommand, UsageError } from './command.js';
import { parseOptions, requiredValue } from './cli-options.js';
import { WAIT_HELP, WAIT_OPTIONS, waitBound, waitIfAsked } from './fleet-wait.js';
import { type CliDatabase, DATABASE_HELP, DATABASE_OPTIONS, databaseTarget, requireKnownSchema, withDatabase } from './database-url.js';
import { requireRegistered } from './registered-issuer.js';
import { shellWord } from './shell-word.js';

/** How one command is described. */
export interface ControlCommandSpec {
  readonly name: string;
  readonly action: ControlAction;
  readonly summary: string;
  /** What the action does, for `--help`. */
  readonly effect: string;
  /** The line printed once recorded. */
  readonly done: (record: ControlRecord) => string;
  /** How to undo it, printed after: the command that does, or why none does. */
  readonly undo: (record: ControlRecord) => string;
}

/** A kid named to `revoke-key` is not one the issuer's key history holds. */
export class UnknownKidError extends Error {
  override readonly name = 'UnknownKidError';
  readonly code = 'kid_unknown' as const;
}

/**
 * Resolves when `kid` is a key the key history (postgresKeyHistory) holds for `issuer`, or when it
 * holds none for it (nothing to judge by: not migrated, or the gateway keeps no history). Else
 * rejects with an {@link UnknownKidError} naming the nearest kid and those held: a revocation is
 * never lifted, and one of a mistyped kid stops nothing while the operator believes the key revoked.
 */
async function requireKnownKid(db: CliDatabase, issuer: string, kid: string): Promise<void> {
  let kids: string[];
  try {
    kids = (await readKeyHistory(db, { issuer, statementTimeout: db.statementTimeout })).map((key) => key.kid);
  } catch (error) {
    if (isMissingTable(error)) return;
    throw error;
  }
  if (kids.length === 0 || kids.includes(kid)) return;
  const nearest = nearestName(kid, kids);
  throw new UnknownKidError(
    `kid ${quote(kid)} is not a key of ${quote(issuer)} in the key history, which holds ${kids.length} (${quoteList(kids)})${nearest === undefined ? '' : `: did you mean ${quote(nearest)}?`} A revocation is never lifted: give a kid it holds ("paygate-auth keys status ${shellWord(issuer)}"), or --force to record it all the same`,
  );
}

/**
 * What was in force before `request` was recorded, when recording it changed nothing a gateway
 * applies: ` (it was suspended already)`, ` (it was not suspended)`, ` (it was revoked already)`;
 * else `''`. So a repeat reads as harmless, and a resumption of the wrong issuer as no resumption.
 */
async function stateBefore(db: CliDatabase, request: { action: ControlAction; issuer: string; kid?: string }): Promise<string> {
  if (request.action === 'refresh_keys') return '';
  const state = foldControls(await readControlRecords(db, db.statementTimeout));
  const suspended = state.suspended.includes(request.issuer);
  if (request.action === 'suspend_issuer') return suspended ? ' (it was suspended already)' : '';
  if (request.action === 'resume_issuer') return suspended ? '' : ' (it was not suspended)';
  return state.revoked.some((key) => key.issuer === request.issuer && key.kid === request.kid) ? ' (it was revoked already)' : '';
}

const STRING = { type: 'string' } as const;
const FLAG = { type: 'boolean' } as const;

/** A command recording `spec.action`. */
function controlCommand(spec: ControlCommandSpec): CliCommand {
  const withKid = spec.action === 'revoke_key';
  const usage = `paygate-auth ${spec.name} --issuer <iss>${withKid ? ' --kid <kid>' : ''} [--force] [--wait [--wait-timeout <s>]] [--database-url <url>]`;
  return {
    name: spec.name,
    summary: spec.summary,
    help: `Usage: ${usage}

${spec.effect}
Every gateway instance attached to the database (postgresControls) applies it within a second,
cached results and verifications in flight included; instances started later load it.

An issuer the registry table does not register (a trailing slash, say) is refused, naming the
issuer it nearly names: the control would stop nothing.${withKid ? '\nSo is a kid the key history (postgresKeyHistory) does not hold for the issuer, when it holds\nany, naming the nearest it holds.' : ''}

Options:
  --issuer <iss>               the issuer as registered (its iss), e.g. https://auth.acme.example${withKid ? '\n  --kid <kid>                  the key id (kid) of the key' : ''}
  --force                      record it even for an issuer not registered (a control ahead of its
                               issuer, applied once it is registered; or a registry kept in code)${withKid ? ',\n                               or a kid the key history does not hold for the issuer' : ''}
${WAIT_HELP}

${DATABASE_HELP}

Exit codes: 0 recorded, 1 not registered${withKid ? ' or an unknown kid' : ''} (without --force), the database failed, or an instance
had not applied it within --wait-timeout, 2 usage.
`,
    async run(args, io) {
      const options = parseOptions(
        args,
        withKid
          ? { issuer: STRING, kid: STRING, force: FLAG, ...WAIT_OPTIONS, ...DATABASE_OPTIONS }
          : { issuer: STRING, force: FLAG, ...WAIT_OPTIONS, ...DATABASE_OPTIONS },
        0,
      );
      const bound = waitBound(options);
      const request = withKid
        ? { action: spec.action, issuer: requiredValue(options, 'issuer'), kid: requiredValue(options, 'kid') }
        : { action: spec.action, issuer: requiredValue(options, 'issuer') };
      try {
        checkControlRequest(request, spec.name);
      } catch (error) {
        throw new UsageError(error instanceof Error ? error.message.replace(`${spec.name}: `, '') : String(error));
      }
      return withDatabase(databaseTarget(options, io.env), async (db) => {
        await requireKnownSchema(db, ['controls']);
        if (options.values.force !== true) {
          await requireRegistered(db, request.issuer);
          if (request.kid !== undefined) await requireKnownKid(db, request.issuer, request.kid);
        }
        const before = await stateBefore(db, request);
        const record = await recordControl(db, request, db.statementTimeout);
        // Undoing a repeat would lift the earlier control too (or suspend an issuer never suspended).
        const undo = before === '' ? spec.undo(record) : 'Nothing in force changed: nothing to undo.';
        io.stdout(`${spec.done(record)}${before} (control #${record.id}, ${record.recordedAt.toISOString()}). ${undo}\n`);
        return waitIfAsked(db, bound, { control: record.id }, io.stdout);
      });
    },
  };
}

/** The four commands, in the order `--help` lists them. */
export const CONTROL_COMMANDS: readonly CliCommand[] = [
  controlCommand({
    name: 'revoke-key',
    action: 'revoke_key',
    summary: 'revoke one key of an issuer on every instance (PostgreSQL)',
    effect:
      'Revokes the key: tokens it signed are refused with key_revoked. A revocation is never lifted;\nthe issuer publishes a new key instead.',
    done: (record) => `Revoked key ${record.kid ?? ''} of ${record.issuer}`,
    undo: () => 'This cannot be undone: a revocation is never lifted (the issuer publishes a new key instead).',
  }),
  controlCommand({
    name: 'suspend-issuer',
    action: 'suspend_issuer',
    summary: 'refuse every token of an issuer on every instance (PostgreSQL)',
    effect: 'Suspends the issuer: all its tokens are refused with issuer_suspended until resume-issuer.',
    done: (record) => `Suspended ${record.issuer}`,
    undo: (record) => `To undo: paygate-auth resume-issuer --issuer ${shellWord(record.issuer)}`,
  }),
  controlCommand({
    name: 'resume-issuer',
    action: 'resume_issuer',
    summary: 'lift suspend-issuer on every instance (PostgreSQL)',
    effect: 'Resumes the issuer: its tokens verify again (revoked keys stay revoked).',
    done: (record) => `Resumed ${record.issuer}`,
    undo: (record) => `To undo: paygate-auth suspend-issuer --issuer ${shellWord(record.issuer)}`,
  }),
  controlCommand({
    name: 'refresh-keys',
    action: 'refresh_keys',
    summary: "reload an issuer's published keys on every instance (PostgreSQL)",
    effect: "Reloads the issuer's JWKS now (after a key was replaced, say); results verified with keys no\nlonger published are dropped.",
    done: (record) => `Asked every instance to reload the keys of ${record.issuer}`,
    undo: () => 'Nothing to undo: the keys published are reloaded, nothing else.',
  }),
];
