import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { SUBPATHS } from '../support/subpaths.js';

/**
 * The package's internal entries, which no export of package.json reaches: the module every area
 * may use, and the command line's own helpers over the PostgreSQL tables and from the issuer kit
 * (src/cli only, as .dependency-cruiser.cjs enforces). Listed so that widening them is seen in review too.
 */
const INTERNAL_ENTRIES: Readonly<Record<string, string>> = {
  'src/internal (every area)': 'src/internal/index.ts',
  'src/postgres/internal (src/cli only)': 'src/postgres/internal.ts',
  'src/issuer/internal (src/cli only)': 'src/issuer/internal.ts',
};

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The names each entry exports, values and types alike, one `name (kind)` line each under its heading. */
function surfaceOf(entries: Readonly<Record<string, string>>): string {
  const files = Object.values(entries).map((file) => `${root}${file}`);
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const lines: string[] = [];
  for (const [subpath, file] of Object.entries(entries)) {
    const source = program.getSourceFile(`${root}${file}`);
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`no module symbol for ${file}`);
    lines.push(`## ${subpath}`);
    const symbols = [...checker.getExportsOfModule(module)].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const symbol of symbols) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      const kind = target.flags & ts.SymbolFlags.Value ? 'value' : 'type';
      lines.push(`${symbol.name} (${kind})`);
    }
    lines.push('');
  }
  return lines.join('\n');
}

describe('the public surface', () => {
  let surface: string;
  beforeAll(() => {
    surface = surfaceOf(SUBPATHS);
  });

  it('of every subpath equals the committed report (etc/public-surface.md); a change to it is seen in review', async () => {
    await expect(surface).toMatchFileSnapshot('../../etc/public-surface.md');
  });

  it('of the internal entries equals the committed report (etc/internal-surface.md); widening one is seen in review', async () => {
    await expect(surfaceOf(INTERNAL_ENTRIES)).toMatchFileSnapshot('../../etc/internal-surface.md');
  });

  it.each([
    'findDuplicateMember',
    'formatMemberPath',
    'MemberPath',
    'MAX_ENTRY_LIFETIME',
    'normalizeScopeRequirement',
    'checkRealm',
    'scopeFailure',
    'PROBLEM_TYPE_BASE',
    'VERIFIER_OPTION_NAMES',
  ])("the root entry does not export %s, a helper for the package's own modules", (name) => {
    const root = surface.split('\n\n')[0]?.split('\n') ?? [];
    expect(root.some((line) => line.startsWith(`${name} (`))).toBe(false);
  });
});
