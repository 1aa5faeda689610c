/**
 * `--wait` of the commands that change the registry or the controls: once the change is written,
 * wait until every live instance (its heartbeat, `postgresHeartbeat`) has applied it, and say so;
 * past `--wait-timeout`, name the instances that have not, and fail (exit 1).
 */
import { quote } from '../internal/index.js';
import type { CliDatabase } from './database-url.js';
import { type FleetWaitReport, type InstanceRecord, waitForFleet } from '../postgres/internal.js';
import { UsageError } from './command.js';
import { type ParsedOptions, secondsValue } from './cli-options.js';
import { EXIT } from './run-cli.js';

/** The options of `--wait`. */
export const WAIT_OPTIONS = { wait: { type: 'boolean' }, 'wait-timeout': { type: 'string' } } as const;

/** Their `--help` lines. */
export const WAIT_HELP = `  --wait                       return once every live instance (a heartbeat, postgresHeartbeat)
                               has applied the change; past --wait-timeout, name those that have
                               not and exit 1
  --wait-timeout <s>           how long --wait waits at most, in whole seconds, 1 to 600 (default
                               10); only with --wait`;

/** Default bound of `--wait`, in seconds. */
const DEFAULT_WAIT = 10;

/** Longest `--wait-timeout`, in seconds (as `--connect-timeout`). */
const MAX_WAIT = 600;

/**
 * `--wait-timeout` in milliseconds when `--wait` is given; `undefined` otherwise.
 * @throws {UsageError} for a bad value, one over {@link MAX_WAIT}, or one given without `--wait`
 * (which would not wait at all).
 */
export function waitBound(parsed: ParsedOptions): number | undefined {
  const seconds = secondsValue(parsed, 'wait-timeout', MAX_WAIT);
  if (parsed.values.wait !== true) {
    if (seconds !== undefined) throw new UsageError('--wait-timeout bounds --wait: add --wait, or leave --wait-timeout out');
    return undefined;
  }
  return (seconds ?? DEFAULT_WAIT) * 1000;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function names(list: readonly string[]): string {
  return list.map(quote).join(', ');
}

/** What a lagging instance has applied, from its last heartbeat. */
function laggard(instance: InstanceRecord): string {
  const applied = [
    instance.registry === null ? undefined : `registry change #${instance.registry.change}`,
    instance.control === null ? undefined : `control #${instance.control}`,
  ].filter((part) => part !== undefined);
  return `${quote(instance.name)} (last heard ${seconds(instance.silentFor)} ago; applied ${applied.join(', ')})`;
}

/** One line on the outcome of a wait, and the exit code it means. */
export function describeWait(report: FleetWaitReport, bound: number): { line: string; code: number } {
  const gone = report.gone.length === 0 ? '' : ` Gone meanwhile (closed): ${names(report.gone)}.`;
  if (report.lagging.length > 0) {
    const applied = report.applied.length === 0 ? '' : ` Applied by ${names(report.applied)}.`;
    return {
      line: `Not applied within ${seconds(bound)} by ${report.lagging.length} of ${report.applied.length + report.lagging.length + report.gone.length} live instance(s): ${report.lagging.map(laggard).join('; ')}.${applied}${gone}`,
      code: EXIT.failed,
    };
  }
  if (report.applied.length === 0 && report.gone.length === 0) {
    return { line: 'No live instance follows what changed (none has a heartbeat, postgresHeartbeat): nothing to wait for.', code: EXIT.ok };
  }
  return { line: `Applied by every live instance (${names(report.applied)}) within ${seconds(report.waited)}.${gone}`, code: EXIT.ok };
}

/**
 * Waits as `--wait` asks (nothing to do without it), writing the outcome to `write`; the exit code.
 * An instance that goes silent is named when the bound passes, never assumed to have applied it.
 */
export async function waitIfAsked(
  db: CliDatabase,
  bound: number | undefined,
  what: { readonly registryChange?: number; readonly control?: number },
  write: (text: string) => void,
): Promise<number> {
  if (bound === undefined) return EXIT.ok;
  if (what.registryChange === undefined && what.control === undefined) {
    write('Nothing was changed: nothing to wait for.\n');
    return EXIT.ok;
  }
  const report = await waitForFleet(db, { ...what, timeout: bound, statementTimeout: db.statementTimeout });
  const { line, code } = describeWait(report, bound);
  write(`${line}\n`);
  return code;
}
