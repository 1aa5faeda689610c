/**
 * The TSDoc of every public options type (each `…Options` a subpath exports), as an editor shows
 * it to a consumer: every member says what it is, an optional one its `@default`, and one that is
 * a duration or a size its unit. Read from the sources with the TypeScript checker; nothing is
 * built.
 */
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { SUBPATHS } from '../support/subpaths.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** A numeric member named as a duration or a size. */
const DURATION_OR_SIZE =
  /(timeout|interval|delay|age|lifetime|lead|cooldown|backoff|tolerance|window|wait|time|after|retention|margin|bytes|length)$/i;
/** A unit, in the member's text or its `@default`. */
const UNIT = /\b(milliseconds?|seconds?|minutes?|hours?|days?|bytes?|bits|KiB|MiB)\b/i;

/**
 * Gaps in areas documented elsewhere, as `Type.member: problem`, left for their owners: each must
 * still be a gap (the last test), so the list only shrinks.
 */
const KNOWN_GAPS: readonly string[] = [];

interface Member {
  readonly name: string;
  readonly optional: boolean;
  readonly numeric: boolean;
  readonly text: string;
  readonly defaultText: string | undefined;
}

/** The members of each exported options type, by type name. */
const optionTypes = new Map<string, Member[]>();

beforeAll(() => {
  const program = ts.createProgram(
    Object.values(SUBPATHS).map((file) => `${root}${file}`),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      types: ['node'],
      noEmit: true,
    },
  );
  const checker = program.getTypeChecker();
  for (const file of Object.values(SUBPATHS)) {
    const module = checker.getSymbolAtLocation(program.getSourceFile(`${root}${file}`) as ts.SourceFile) as ts.Symbol;
    for (const exported of checker.getExportsOfModule(module)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      if (!/Options$/.test(symbol.name) || optionTypes.has(symbol.name)) continue;
      const members = checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol)).flatMap((property): Member[] => {
        const declaration = property.declarations?.[0];
        if (declaration === undefined) return [];
        const type = checker.getNonNullableType(checker.getTypeOfSymbolAtLocation(property, declaration));
        const tag = property.getJsDocTags(checker).find((found) => found.name === 'default');
        return [
          {
            name: property.name,
            // Optional where declared so: `registry` is optional in an adapter's union of options only
            // because the branch with a `verifier` refuses it.
            optional:
              (property.flags & ts.SymbolFlags.Optional) !== 0 &&
              (property.declarations ?? []).every((found) => !ts.isPropertySignature(found) || found.questionToken !== undefined),
            numeric: (type.flags & ts.TypeFlags.NumberLike) !== 0,
            text: ts.displayPartsToString(property.getDocumentationComment(checker)).trim(),
            defaultText: tag === undefined ? undefined : ts.displayPartsToString(tag.text).trim(),
          },
        ];
      });
      optionTypes.set(symbol.name, members);
    }
  }
}, 120_000);

/** What the TSDoc of `type`'s members lacks, as `Type.member: problem`. */
function gapsOf(type: string): string[] {
  return (optionTypes.get(type) ?? []).flatMap(({ name, optional, numeric, text, defaultText }) => [
    ...(text === '' ? [`${type}.${name}: no text`] : []),
    ...(optional && (defaultText === undefined || defaultText === '') ? [`${type}.${name}: no @default`] : []),
    ...(numeric && DURATION_OR_SIZE.test(name) && !UNIT.test(`${text} ${defaultText ?? ''}`) ? [`${type}.${name}: no unit`] : []),
  ]);
}

describe("the public options types' TSDoc", () => {
  it('finds the options types of every subpath', () => {
    expect([...optionTypes.keys()]).toEqual(
      expect.arrayContaining([
        'VerifierOptions',
        'TestIssuerOptions',
        'PostgresPaymentLinkStoreOptions',
        'IssuerOptions',
        'TelemetryOptions',
      ]),
    );
  });

  it('gives every member a text, every optional one its @default, and every duration or size its unit', () => {
    const gaps = [...optionTypes.keys()].flatMap(gapsOf);
    expect(gaps.filter((gap) => !KNOWN_GAPS.includes(gap))).toEqual([]);
  });

  it('lists as known only gaps that are still there', () => {
    const gaps = new Set([...optionTypes.keys()].flatMap(gapsOf));
    expect(KNOWN_GAPS.filter((gap) => !gaps.has(gap))).toEqual([]);
  });
});
