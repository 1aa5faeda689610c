import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fixture = fileURLToPath(new URL('./fixture', import.meta.url));
const config = fileURLToPath(new URL('../../.dependency-cruiser.cjs', import.meta.url));
const depcruise = fileURLToPath(new URL('../../node_modules/dependency-cruiser/bin/dependency-cruise.mjs', import.meta.url));

interface Violation {
  readonly rule: { readonly name: string };
  readonly from: string;
  readonly to: string;
}

/** The violations that the CI boundary check finds in `src` of `cwd`. */
function violations(cwd: string): readonly Violation[] {
  const args = [depcruise, 'src', '--config', config, '--output-type', 'json'];
  const out = execFileSync(process.execPath, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(out).summary.violations;
}

/** The exit code of the check as `npm run lint:boundaries` runs it. */
function exitCode(cwd: string): number {
  const run = spawnSync(process.execPath, [depcruise, 'src', '--config', config], { cwd, encoding: 'utf8' });
  return run.status ?? -1;
}

describe('module boundaries (npm run lint:boundaries)', () => {
  it('src imports another area only through its public entry or src/internal', () => {
    // .ci/run also runs npm run lint:boundaries itself, whose exit code fails CI on a violation.
    expect(violations(root).map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)).toEqual([]);
  });

  it("a reach-in past a public entry, or into the command line's own entry of postgres, fails the check, naming the rule and both files", () => {
    expect(exitCode(fixture)).not.toBe(0);
    expect(violations(fixture).map((v) => [v.rule.name, v.from, v.to])).toEqual([
      ['cli-uses-public-entries', 'src/cli/main.ts', 'src/issuer/rsa-key.ts'],
      ['postgres-internal-is-for-the-cli', 'src/testing/index.ts', 'src/postgres/internal.ts'],
      ['testing-uses-root', 'src/testing/index.ts', 'src/postgres/internal.ts'],
    ]);
  });
});
