#!/usr/bin/env node
/**
 * `paygate-auth`, the package's command line (`npx paygate-auth --help`).
 *
 * @module paygate-auth/cli
 */
import { COMMANDS } from './commands.js';
import { runCli } from './run-cli.js';

const io = {
  stdout: (text: string) => void process.stdout.write(text),
  stderr: (text: string) => void process.stderr.write(text),
  env: process.env,
};
void runCli(process.argv.slice(2), io, COMMANDS).then((code) => {
  process.exitCode = code;
});
