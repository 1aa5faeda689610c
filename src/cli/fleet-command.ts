/**
 * `paygate-auth fleet`: the live instances, as their heartbeats show them (`postgresHeartbeat`),
 * what each has applied (registry change and digest, last control) beside what the tables hold,
 * and how stale each is: a split fleet shows at a glance. Every value read is escaped.
 */
import { oneLineJson, quote } from '../internal/index.js';
import { type FleetState, type InstanceRecord, LIVE_MARGIN, readFleet } from '../postgres/internal.js';
import type { CliCommand } from './command.js';
import { parseOptions } from './cli-options.js';
import { DATABASE_HELP, DATABASE_OPTIONS, databaseTarget, withDatabase } from './database-url.js';
import { allowedJwksHosts } from './gateway-check.js';
import { EXIT } from './run-cli.js';

/** Hex digits of a digest shown (the JSON has it whole). */
const DIGEST_SHOWN = 12;

/**
 * The start of `digest` as shown: hex as it is; anything else (a heartbeat row written by hand
 * before its constraint, `fleet` version 3) quoted, so no text of a row reaches the terminal raw.
 */
function shownDigest(digest: string): string {
  const start = digest.slice(0, DIGEST_SHOWN);
  return /^[0-9a-f]*$/.test(start) ? start : quote(start);
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** How `instance` differs from what the tables hold; `[]` when it is up to date. */
function lags(instance: InstanceRecord, fleet: FleetState): string[] {
  const found: string[] = [];
  const { registry } = instance;
  if (registry !== null && fleet.registry !== null) {
    if (registry.change !== fleet.registry.change) found.push(`registry behind (change #${registry.change} of #${fleet.registry.change})`);
    else if (registry.digest !== fleet.registry.digest) found.push('another registry than the table (digest differs)');
  }
  if (instance.control !== null && fleet.control !== null && instance.control < fleet.control) {
    found.push(`controls behind (#${instance.control} of #${fleet.control})`);
  }
  if (!instance.live) found.push(`not live (silent for ${seconds(instance.silentFor)})`);
  return found;
}

function instanceLine(instance: InstanceRecord, fleet: FleetState): string {
  const registry =
    instance.registry === null
      ? 'registry not followed'
      : `registry #${instance.registry.change} ${shownDigest(instance.registry.digest)} (${instance.registry.issuers} issuer(s))`;
  const controls = instance.control === null ? 'controls not followed' : `controls #${instance.control}`;
  const lagging = lags(instance, fleet);
  return `  ${quote(instance.name)}  heard ${seconds(instance.silentFor)} ago  ${registry}  ${controls}  ${lagging.length === 0 ? 'up to date' : lagging.join(', ')}`;
}

function tablesLine(fleet: FleetState): string {
  const registry =
    fleet.registry === null
      ? 'Registry: not in this database.'
      : `Registry: change #${fleet.registry.change}, ${fleet.registry.issuers} issuer(s)${fleet.registry.refused === 0 ? '' : ` (${fleet.registry.refused} row(s) left out)`}, digest ${fleet.registry.digest.slice(0, DIGEST_SHOWN)}.`;
  const controls = fleet.control === null ? 'Controls: not in this database.' : `Controls: #${fleet.control}.`;
  return `${registry} ${controls}`;
}

export const fleetCommand: CliCommand = {
  name: 'fleet',
  summary: 'the live instances and what each has applied: registry change and digest, controls, staleness (PostgreSQL)',
  help: `Usage: paygate-auth fleet [--all] [--json] [--allow-jwks-host <host>]… [--database-url <url>]

Prints what the registry table and the controls hold now (the registry's last change, its digest
as every instance computes it, the last control), then each live instance as its heartbeat shows
it (postgresHeartbeat): its name, when it was last heard from, the registry change and digest it
applied, the last control it applied, and how it lags: "registry behind", "another registry than
the table" (a split fleet), "controls behind". An instance is live while it was heard from within
three heartbeat intervals and ${LIVE_MARGIN / 1000} s more.

Options:
  --all   the instances not live too (rows are deleted a day after their last heartbeat)
  --json  one JSON object on one line: { "registry", "control", "instances" }, each instance whole
  --allow-jwks-host <host>  a JWKS host the instances allow although special-purpose (repeatable;
          their jwksAllowedHosts), so that the table's digest is the one they compute

${DATABASE_HELP}

Exit codes: 0 listed, 1 the database failed, 2 usage.
`,
  async run(args, io) {
    const parsed = parseOptions(
      args,
      {
        all: { type: 'boolean' },
        json: { type: 'boolean' },
        'allow-jwks-host': { type: 'string', multiple: true },
        ...DATABASE_OPTIONS,
      },
      0,
    );
    const jwksAllowedHosts = allowedJwksHosts(parsed);
    const fleet = await withDatabase(databaseTarget(parsed, io.env), (db) =>
      readFleet(db, { statementTimeout: db.statementTimeout, jwksAllowedHosts }),
    );
    const shown = parsed.values.all === true ? fleet.instances : fleet.instances.filter((instance) => instance.live);
    if (parsed.values.json === true) {
      io.stdout(`${oneLineJson({ registry: fleet.registry, control: fleet.control, instances: shown })}\n`);
      return EXIT.ok;
    }
    const live = fleet.instances.filter((instance) => instance.live).length;
    const lines = [
      tablesLine(fleet),
      live === 0 ? 'No live instance (none has a heartbeat: postgresHeartbeat).' : `${live} live instance(s):`,
      ...shown.map((instance) => instanceLine(instance, fleet)),
    ];
    const hidden = fleet.instances.length - shown.length;
    if (hidden > 0) lines.push(`${hidden} instance(s) not live: --all lists them.`);
    io.stdout(`${lines.join('\n')}\n`);
    return EXIT.ok;
  },
};
