/**
 * Every command of the `paygate-auth` command line, in the order `--help` lists them.
 */
import type { CliCommand } from './command.js';
import { controlsCommand } from './controls-command.js';
import { controlsCompactCommand } from './controls-compact-command.js';
import { doctorCommand } from './doctor.js';
import { fleetCommand } from './fleet-command.js';
import { ISSUERS_COMMANDS } from './issuers-command.js';
import { keysGenerateCommand } from './keys-generate.js';
import { keysStatusCommand } from './keys-status.js';
import { migrateCommand } from './migrate-command.js';
import { CONTROL_COMMANDS } from './operator-control-command.js';
import { tokenSignCommand } from './token-sign.js';

/** The commands, by the order of the help listing: the gateway's operators', then the integration's. */
export const COMMANDS: readonly CliCommand[] = [
  migrateCommand,
  ...CONTROL_COMMANDS,
  controlsCommand,
  controlsCompactCommand,
  fleetCommand,
  ...ISSUERS_COMMANDS,
  keysStatusCommand,
  doctorCommand,
  keysGenerateCommand,
  tokenSignCommand,
];
