/**
 * The documents shipped in the package (README.md, CHANGELOG.md, docs/) point only at what the
 * package holds (their links are checked in test/docs/documentation.test.ts): a file of the
 * repository that the package leaves out (examples/, test/, bench/, src/) is named only in a paragraph, or a page whose
 * introduction, says it is in the repository, so that a reader of node_modules/paygate-auth is not sent to a missing file.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type PackedPackage, packedPackage } from '../support/packed-package.js';

const packed = packedPackage();
const documents = (packed?.files ?? []).filter((file) => file.endsWith('.md'));
const REPOSITORY_PATH = /(?<![\w/.-])(?:examples|test|bench|src)\/[\w./-]*/g;

/** Paragraphs: blocks between blank lines (a table or a list without blank lines is one block). */
async function paragraphs(file: string): Promise<string[]> {
  return (await readFile(join((packed as PackedPackage).unpacked, file), 'utf8')).split(/\n\s*\n/);
}

describe.skipIf(packed === null)('the documents shipped in the package', () => {
  it('are packed: README.md, CHANGELOG.md and docs/', () => {
    expect(documents).toEqual(expect.arrayContaining(['README.md', 'CHANGELOG.md', 'docs/issuer.md']));
  });

  it.each(documents)('%s names a repository file outside the package only where it says so', async (file) => {
    const blocks = await paragraphs(file);
    // A page about the repository says so once, before its first section.
    const intro = blocks
      .slice(
        0,
        blocks.findIndex((block) => block.startsWith('## ')),
      )
      .join('\n');
    if (/\brepository\b/i.test(intro)) return;
    const unmarked = blocks
      .filter((paragraph) => !/\brepository\b/i.test(paragraph))
      .flatMap((paragraph) => [...paragraph.matchAll(REPOSITORY_PATH)].map((match) => match[0]))
      .filter((path) => !(packed as PackedPackage).files.includes(path));
    expect(unmarked).toEqual([]);
  });
});
