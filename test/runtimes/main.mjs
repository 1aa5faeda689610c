/**
 * Runs the conformance suite under Deno or Bun (`deno run`, `bun run`): prints a line per failure
 * and `<runtime>: N passed, M failed`, and exits 1 on any failure. It exits explicitly: on Deno,
 * the test kit's optional `import('msw')` leaves msw's handles open, which would keep the process
 * alive after the last case.
 */
import { cases, runCases } from './conformance.mjs';

const runtime = typeof Deno === 'object' ? 'deno' : typeof Bun === 'object' ? 'bun' : 'node';
const { failed } = await runCases(cases, runtime);
process.exit(failed === 0 && cases.length > 0 ? 0 : 1);
