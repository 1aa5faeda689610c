import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { MAX_PATH_CHARS } from '../../src/core/duplicate-members.js';
import { MAX_QUOTED_CHARS } from '../../src/core/hint-text.js';
import { type MemberPath, findDuplicateMember, formatMemberPath } from '../../src/internal/index.js';

describe('findDuplicateMember: the first repeated member name, in the order of the text', () => {
  test.each<[string, string, MemberPath | undefined]>([
    ['an empty object', '{}', undefined],
    ['distinct names', '{"a":1,"b":2,"c":3}', undefined],
    ['a repeated top-level name', '{"amount":"10.00","amount":"20.00"}', ['amount']],
    ['a repeat separated by other members', '{"a":1,"b":2,"a":3}', ['a']],
    ['the alg attack header', '{"alg":"none","alg":"RS256"}', ['alg']],
    ['the iss attack payload', '{"iss":"a","iss":"b"}', ['iss']],
    ['a repeat in a nested object', '{"a":{"x":1,"x":2}}', ['a', 'x']],
    ['the same name in sibling objects', '{"a":{"x":1},"b":{"x":2}}', undefined],
    ['the same name at two depths', '{"x":{"x":{"x":1}}}', undefined],
    ['a repeat inside an array element', '{"items":[{"n":1},{"n":2,"n":3}]}', ['items', 1, 'n']],
    ['objects in a top-level array', '[{"a":1},{"a":1,"a":2}]', [1, 'a']],
    ['an escaped name equal to a plain one', '{"a":1,"\\u0061":2}', ['a']],
    ['an escaped name in upper-case hex', '{"\\u004A":1,"J":2}', ['J']],
    ['names that differ only by an escaped quote', '{"a\\"":1,"a":2}', undefined],
    ['a name ending in an escaped backslash', '{"a\\\\":1,"a\\\\":2}', ['a\\']],
    ['a name with a surrogate pair, escaped and not', '{"\\ud83d\\ude00":1,"😀":2}', ['😀']],
    ['names that differ in case', '{"Alg":1,"alg":2}', undefined],
    ['a value that looks like a member', '{"a":"\\",\\"a\\":1","b":2}', undefined],
    ['a repeated string among array values', '{"a":["x","x"]}', undefined],
    ['a value equal to a name', '{"a":"a","b":"a"}', undefined],
    ['white space around the separators', '{ "a" : 1 ,\n\t"a" : 2 }', ['a']],
    ['a repeat after a closed nested object', '{"a":{"b":1},"c":[1,{"d":2}],"a":3}', ['a']],
    ['__proto__ twice', '{"__proto__":{},"__proto__":{}}', ['__proto__']],
    ['a scalar', '"a"', undefined],
    ['an empty name twice', '{"":1,"":2}', ['']],
  ])('%s', (_name, text, expected) => {
    expect(findDuplicateMember(text)).toEqual(expected);
    expect(findDuplicateMember(text, JSON.parse(text))).toEqual(expected);
  });

  test.each([
    ['a colon inside a string value', String.raw`{"a":"x\":y","a":1}`, ['a']],
    ['names with colons', '{"a:":1,"a:":2}', ['a:']],
    ['white space before the colons', '{"a"\n :1,"a" :2}', ['a']],
  ])('with the parsed value, %s still finds the repeat', (_name, text, expected) => {
    expect(findDuplicateMember(text, JSON.parse(text))).toEqual(expected);
  });

  test('the earliest repeat in the text wins, however deep', () => {
    expect(findDuplicateMember('{"a":{"x":1,"x":2},"a":3}')).toEqual(['a', 'x']);
    expect(findDuplicateMember('{"a":1,"a":{"x":1,"x":2}}')).toEqual(['a']);
  });

  test('nesting far deeper than the call stack allows is scanned', () => {
    const depth = 100_000;
    const text = `${'{"a":'.repeat(depth)}{"k":1,"k":2}${'}'.repeat(depth)}`;
    const found = findDuplicateMember(text);
    expect(found?.length).toBe(depth + 1);
    expect(found?.at(-1)).toBe('k');
  });

  test('text JSON.parse refuses never throws', () => {
    for (const text of ['{', '}', ']]]', '{"a', '{"a\\', '"\\u12', ',,,', '{"a":1,,"a":2', '[}']) {
      expect(() => findDuplicateMember(text)).not.toThrow();
    }
  });
});

describe('formatMemberPath', () => {
  test.each<[MemberPath, string]>([
    [['amount'], 'amount'],
    [['payment_details', 'line_items', 0, 'amount'], 'payment_details.line_items[0].amount'],
    [[1, 'a'], '[1].a'],
    [['meta', 'odd name'], 'meta["odd name"]'],
    [['a\nb'], '["a\\u000ab"]'],
    [['\u202e\u0085\u007f'], '["\\u202e\\u0085\\u007f"]'],
  ])('%j is written %s', (path, text) => {
    expect(formatMemberPath(path)).toBe(text);
  });

  test(`a name longer than ${MAX_QUOTED_CHARS} characters is cut`, () => {
    expect(formatMemberPath(['-'.repeat(500)])).toBe(`["${'-'.repeat(MAX_QUOTED_CHARS)}…"]`);
  });

  test(`a path nested thousands deep is cut at ${MAX_PATH_CHARS} characters`, () => {
    const text = formatMemberPath(Array.from({ length: 5000 }, () => 'a'));
    expect(text.length).toBeLessThanOrEqual(MAX_PATH_CHARS + 1);
    expect(text.endsWith('…')).toBe(true);
  });

  test('the message for a repeat nested thousands deep stays short (it reaches the problem detail)', () => {
    const depth = 3000;
    const text = `${'{"a":'.repeat(depth)}{"x":1,"x":2}${'}'.repeat(depth)}`;
    const path = findDuplicateMember(text);
    expect(path).toHaveLength(depth + 1);
    expect(formatMemberPath(path as MemberPath).length).toBeLessThanOrEqual(MAX_PATH_CHARS + 1);
  });
});

/** A JSON value as a tree whose objects keep every member, repeats included, in order. */
type Tree =
  | null
  | number
  | string
  | boolean
  | { readonly array: readonly Tree[] }
  | { readonly members: readonly (readonly [string, Tree])[] };

/** Names from a small alphabet, so that repeats are common; some need escapes. */
const nameArb = fc.constantFrom('a', 'b', 'A', 'é', '"', '\\', '\n', '😀', 'a"', '', '__proto__', 'ab');

const { tree } = fc.letrec<{ tree: Tree }>((self) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.integer(),
    fc.boolean(),
    // Strings that look like members, to be taken for values only.
    fc.constantFrom('x', '{"a":1,"a":2}', '","a":', '\\', '"'),
    fc.record({ array: fc.array(self('tree'), { maxLength: 4 }) }),
    fc.record({ members: fc.array(fc.tuple(nameArb, self('tree')), { maxLength: 5 }) }),
  ),
}));

/** A document: mostly an object with several members, where repeats can happen. */
const document = fc.oneof(
  { weight: 1, arbitrary: tree },
  { weight: 4, arbitrary: fc.record({ members: fc.array(fc.tuple(nameArb, tree), { minLength: 1, maxLength: 6 }) }) },
);

/** A JSON string for `text`, each character written plainly or as a \u escape. */
function writeString(text: string, escapes: readonly boolean[]): string {
  let out = '"';
  let index = 0;
  for (const char of text) {
    const plain = JSON.stringify(char).slice(1, -1);
    const escaped = Array.from(
      { length: char.length },
      (_unused, unit) => `\\u${char.charCodeAt(unit).toString(16).padStart(4, '0')}`,
    ).join('');
    out += escapes[index % Math.max(escapes.length, 1)] === true ? escaped : plain;
    index += 1;
  }
  return `${out}"`;
}

function write(value: Tree, escapes: readonly boolean[], space: string): string {
  if (value === null || typeof value !== 'object') return typeof value === 'string' ? writeString(value, escapes) : JSON.stringify(value);
  if ('array' in value) return `[${space}${value.array.map((item) => write(item, escapes, space)).join(`,${space}`)}]`;
  const members = value.members.map(([name, item]) => `${writeString(name, escapes)}${space}:${space}${write(item, escapes, space)}`);
  return `{${space}${members.join(`,${space}`)}${space}}`;
}

/** The reference: a walk of the tree in document order, each object checking its names so far. */
function firstRepeat(value: Tree, path: readonly (string | number)[] = []): MemberPath | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if ('array' in value) {
    for (const [index, item] of value.array.entries()) {
      const found = firstRepeat(item, [...path, index]);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  const seen = new Set<string>();
  for (const [name, item] of value.members) {
    if (seen.has(name)) return [...path, name];
    seen.add(name);
    const found = firstRepeat(item, [...path, name]);
    if (found !== undefined) return found;
  }
  return undefined;
}

describe('findDuplicateMember agrees with a reference walk of the parsed tree (property)', () => {
  test('on any JSON written with any mix of escapes and white space', () => {
    fc.assert(
      fc.property(
        document,
        fc.array(fc.boolean(), { minLength: 1, maxLength: 7 }),
        fc.constantFrom('', ' ', '\n\t '),
        (value, escapes, space) => {
          const text = write(value, escapes, space);
          JSON.parse(text);
          expect(findDuplicateMember(text)).toEqual(firstRepeat(value));
        },
      ),
      { numRuns: 2000 },
    );
  });

  test('given the parsed value too (the quick count first), it answers the same', () => {
    let repeats = 0;
    fc.assert(
      fc.property(
        document,
        fc.array(fc.boolean(), { minLength: 1, maxLength: 7 }),
        fc.constantFrom('', ' ', '\n\t '),
        (value, escapes, space) => {
          const text = write(value, escapes, space);
          const expected = firstRepeat(value);
          if (expected !== undefined) repeats += 1;
          expect(findDuplicateMember(text, JSON.parse(text))).toEqual(expected);
        },
      ),
      { numRuns: 2000 },
    );
    // The generator must give both outcomes often, or the property proves little.
    expect(repeats).toBeGreaterThan(200);
    expect(repeats).toBeLessThan(1800);
  });

  test('finds nothing in what JSON.stringify writes (it cannot repeat a name)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(findDuplicateMember(JSON.stringify(value))).toBeUndefined();
      }),
      { numRuns: 1000 },
    );
  });

  test('never throws on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        findDuplicateMember(text);
      }),
      { numRuns: 500 },
    );
  });
});
