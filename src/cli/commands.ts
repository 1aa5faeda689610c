/**
 * Every command of the `paygate-auth` command line, in the order `--help` lists them.
 *
 * @module paygate-auth/cli
 */
import type { CliCommand } from './command.js';
import { controlsCommand } from './controls-command.js';
import { controlsCompactCommand } from './controls-compact-command.js';
import { doctorCommand } from './doctor.js';
import { keysGenerateCommand } from './keys-generate.js';
import { migrateCommand } from './migrate-command.js';
import { refreshKeysCommand } from './refresh-keys-command.js';
import { resumeIssuerCommand } from './resume-issuer-command.js';
import { revokeKeyCommand } from './revoke-key-command.js';
import { suspendIssuerCommand } from './suspend-issuer-command.js';
import { tokenSignCommand } from './token-sign.js';

/** The commands, by the order of the help listing: the gateway's operators', then the integration's. */
export const COMMANDS: readonly CliCommand[] = [
  migrateCommand,
  revokeKeyCommand,
  suspendIssuerCommand,
  resumeIssuerCommand,
  refreshKeysCommand,
  controlsCommand,
  controlsCompactCommand,
  doctorCommand,
  keysGenerateCommand,
  tokenSignCommand,
];
