/**
 * Every command of the `paygate-auth` command line, in the order `--help` lists them.
 *
 * @module paygate-auth/cli
 */
import type { CliCommand } from './command.js';
import { doctorCommand } from './doctor.js';
import { keysGenerateCommand } from './keys-generate.js';
import { tokenSignCommand } from './token-sign.js';

/** The commands, by the order of the help listing. */
export const COMMANDS: readonly CliCommand[] = [
  doctorCommand,
  keysGenerateCommand,
  tokenSignCommand,
];
