/**
 * Near misses between two identifiers (issuer URLs, audiences, kids): the same text but for a
 * trailing slash, letter case, `http:` against `https:` (or no scheme), surrounding white space, or
 * a few non-ASCII characters in place of ASCII ones (a lookalike, named by code point).
 * Verification never normalises (an `iss` is compared byte for byte); hints name these differences
 * because they are the usual cause of a mismatch.
 *
 * Linear in the text: each identifier is reduced once (no regular expression, so nothing can
 * backtrack over a hostile value such as `"////…/x"`), and the reduced forms are compared.
 */
import { quote } from './hint-text.js';

function schemeOf(text: string): string {
  for (const scheme of ['https://', 'http://']) {
    if (text.length >= scheme.length && text.slice(0, scheme.length).toLowerCase() === scheme) return text.slice(0, scheme.length);
  }
  return '';
}

/**
 * Where the slashes that end `text` start, no earlier than `from`: `text.length` when it ends in
 * none. One pass from the end, no regular expression: `/\/+$/` tries every slash of a run that
 * does not end the text (`"////…/x"`), each to its end, so it takes quadratic time.
 */
export function trailingSlashesStart(text: string, from = 0): number {
  let end = text.length;
  while (end > from && text.charCodeAt(end - 1) === 0x2f) end -= 1;
  return end;
}

/** `text` without the slashes that end it (`https://pay.example/l/` → `https://pay.example/l`), in linear time. */
export function withoutTrailingSlashes(text: string): string {
  return text.slice(0, trailingSlashesStart(text));
}

/** An identifier taken apart: its scheme (`http://`, `https://` or `''`), core and trailing slashes. */
function parts(text: string) {
  const trimmedText = text.trim();
  const scheme = schemeOf(trimmedText);
  const end = trailingSlashesStart(trimmedText, scheme.length);
  return {
    text,
    trimmed: trimmedText !== text,
    scheme,
    core: trimmedText.slice(scheme.length, end),
    slashes: trimmedText.length - end,
  };
}

type Parts = ReturnType<typeof parts>;

/** `U+0435`: a code unit by its code point, which shows what a lookalike hides. */
function codePoint(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * How two cores of one length differ: by letter case, and by non-ASCII characters in `given` in
 * place of ASCII ones in `expected` (a lookalike, `е` for `e`, prints the same), fewer than half
 * its characters; `undefined` when they differ otherwise. One pass.
 */
function compareCores(given: string, expected: string): { readonly letterCase: boolean; readonly lookalike?: string } | undefined {
  let letterCase = false;
  let swapped = 0;
  let first = 0;
  for (let index = 0; index < given.length; index += 1) {
    const mine = given.charCodeAt(index);
    const theirs = expected.charCodeAt(index);
    if (mine === theirs) continue;
    if (mine > 0x7f && theirs <= 0x7f) {
      if (swapped === 0) first = index;
      swapped += 1;
    } else if ((given[index] as string).toLowerCase() === (expected[index] as string).toLowerCase()) letterCase = true;
    else return undefined;
  }
  if (swapped === 0) return { letterCase };
  if (swapped * 2 >= given.length) return undefined;
  const code = codePoint(given.charCodeAt(first));
  const lookalike =
    swapped === 1
      ? `a non-ASCII character (${code}) in place of ${quote(expected[first] as string)}`
      : `${swapped} non-ASCII characters (the first ${code}) in place of ASCII ones`;
  return { letterCase, lookalike };
}

function differenceOf(given: Parts, expected: Parts): string | undefined {
  if (given.text === expected.text || given.core.length !== expected.core.length) return undefined;
  if (given.core === '' && given.scheme === '') return undefined;
  const cores = compareCores(given.core, expected.core);
  if (cores === undefined) return undefined;
  const differences: string[] = [];
  const givenScheme = given.scheme.toLowerCase();
  const expectedScheme = expected.scheme.toLowerCase();
  if (givenScheme !== expectedScheme)
    differences.push(given.scheme === '' || expected.scheme === '' ? 'a missing scheme' : 'http: against https:');
  if (given.slashes !== expected.slashes) differences.push('a trailing slash');
  if (cores.letterCase || (given.scheme !== expected.scheme && givenScheme === expectedScheme)) differences.push('letter case');
  if (cores.lookalike !== undefined) differences.push(cores.lookalike);
  if (given.trimmed || expected.trimmed) differences.push('surrounding white space');
  return differences.length === 0 ? undefined : differences.join(' and ');
}

/**
 * How `given` differs from `expected` when it is a near miss (`a trailing slash`, `letter case`,
 * `http: against https:`, `a missing scheme`, `surrounding white space`, `a non-ASCII character
 * (U+0435) in place of "e"`, joined with "and"), or `undefined` when the two are equal or differ
 * otherwise.
 */
export function nearMiss(given: string, expected: string): string | undefined {
  return differenceOf(parts(given), parts(expected));
}

/** Frozen lists of candidates taken apart, each once (the verifier's issuers, one list per registry). */
const TAKEN_APART = new WeakMap<readonly string[], readonly Parts[]>();

/**
 * `candidates` taken apart: a frozen array once for all (it cannot change), so that a hint against
 * a registry of thousands of issuers, which any token naming another issuer asks for, costs a
 * comparison of lengths per issuer, not their texts taken apart again.
 */
function candidateParts(candidates: Iterable<string>): readonly Parts[] {
  if (!Array.isArray(candidates) || !Object.isFrozen(candidates)) return Array.from(candidates, (candidate) => parts(candidate));
  let held = TAKEN_APART.get(candidates);
  if (held === undefined) {
    held = candidates.map((candidate: string) => parts(candidate));
    TAKEN_APART.set(candidates, held);
  }
  return held;
}

/**
 * The first of `candidates` that `given` nearly misses, and how. `given` is taken apart once; a
 * candidate is compared only when its core has the same length, so the cost is linear in the
 * total length of the texts.
 */
export function findNearMiss(
  given: string,
  candidates: Iterable<string>,
): { readonly candidate: string; readonly difference: string } | undefined {
  const mine = parts(given);
  for (const theirs of candidateParts(candidates)) {
    const difference = differenceOf(mine, theirs);
    if (difference !== undefined) return { candidate: theirs.text, difference };
  }
  return undefined;
}

/** A candidate as {@link nearMissesFirst} orders it: how `given` nearly misses it, if it does. */
export interface RankedCandidate {
  readonly candidate: string;
  readonly difference?: string;
}

/**
 * The first `limit` of `candidates` (all by default), those `given` nearly misses first (each with
 * how), then the others, each group in its own order. `given` is taken apart once, and a
 * candidate is compared only when its core has the same length: linear in the total length of
 * the texts, and with a frozen list taken apart before, in its number of candidates.
 */
export function nearMissesFirst(given: string, candidates: Iterable<string>, limit = Number.POSITIVE_INFINITY): RankedCandidate[] {
  const mine = parts(given);
  const misses: RankedCandidate[] = [];
  const others: RankedCandidate[] = [];
  for (const theirs of candidateParts(candidates)) {
    if (misses.length >= limit) break;
    const difference = differenceOf(mine, theirs);
    if (difference !== undefined) misses.push({ candidate: theirs.text, difference });
    else if (others.length < limit) others.push({ candidate: theirs.text });
  }
  return [...misses, ...others].slice(0, limit);
}
