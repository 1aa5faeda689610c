/**
 * Where `npm test` type-checks the sources: the build writes declarations without a check
 * (`tsc --noCheck`), so the tsc that vitest runs for the type tests (`*.test-d.ts`, with
 * test/tsconfig.test-d.json and `ignoreSourceErrors: false`) is what fails the run on a type error
 * in src/. It does so only for the files its configuration takes in.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const CONFIG = join(root, 'test/tsconfig.test-d.json');

/** Every TypeScript file under `directory`, relative to the repository. */
function sourcesUnder(directory: string): string[] {
  return readdirSync(join(root, directory), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(directory, name));
}

describe("the type tests' tsc", () => {
  it('takes in every file of src/, so a type error anywhere there fails npm test', () => {
    const { config, error } = ts.readConfigFile(CONFIG, ts.sys.readFile);
    expect(error).toBeUndefined();
    const parsed = ts.parseJsonConfigFileContent(config, ts.sys, join(root, 'test'), undefined, CONFIG);
    const taken = new Set(parsed.fileNames.map((file) => relative(root, file)));
    const sources = sourcesUnder('src');
    expect(sources.length).toBeGreaterThan(100);
    expect(sources.filter((file) => !taken.has(file))).toEqual([]);
  });
});
