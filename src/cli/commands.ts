/**
 * Every command of the `paygate-auth` command line, in the order `--help` lists them.
 *
 * @module paygate-auth/cli
 */
import type { CliCommand } from './command.js';

/** The commands, by the order of the help listing. */
export const COMMANDS: readonly CliCommand[] = [];
