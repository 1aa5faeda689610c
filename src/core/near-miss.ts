/**
 * Near misses between two identifiers (issuer URLs, audiences, kids): the same text but for a
 * trailing slash, letter case, `http:` against `https:` (or no scheme), or surrounding white space. Verification
 * never normalises (an `iss` is compared byte for byte); hints name these differences because they
 * are the usual cause of a mismatch.
 *
 * @module paygate-auth
 */

const SCHEME = /^https?:\/\//i;

/** The text with surrounding white space, an http(s) scheme and trailing slashes removed. */
function core(text: string): string {
  return text.trim().replace(SCHEME, '').replace(/\/+$/, '');
}

function scheme(text: string): string {
  return SCHEME.exec(text.trim())?.[0] ?? '';
}

function trailingSlashes(text: string): number {
  return text.trim().length - text.trim().replace(/\/+$/, '').length;
}

/**
 * How `given` differs from `expected` when it is a near miss (`a trailing slash`, `letter case`,
 * `http: against https:`, `a missing scheme`, `surrounding white space`, joined with "and"), or `undefined` when the
 * two are equal or differ otherwise.
 */
export function nearMiss(given: string, expected: string): string | undefined {
  if (given === expected || core(given).toLowerCase() !== core(expected).toLowerCase()) return undefined;
  if (core(given) === '' && scheme(given) === '') return undefined;
  const differences: string[] = [];
  if (scheme(given).toLowerCase() !== scheme(expected).toLowerCase()) {
    differences.push(scheme(given) === '' || scheme(expected) === '' ? 'a missing scheme' : 'http: against https:');
  }
  if (trailingSlashes(given) !== trailingSlashes(expected)) differences.push('a trailing slash');
  if (core(given) !== core(expected) || (scheme(given) !== scheme(expected) && scheme(given).toLowerCase() === scheme(expected).toLowerCase())) {
    differences.push('letter case');
  }
  if (given.trim() !== given || expected.trim() !== expected) differences.push('surrounding white space');
  return differences.length === 0 ? undefined : differences.join(' and ');
}

/** The first of `candidates` that `given` nearly misses, and how. */
export function findNearMiss(given: string, candidates: Iterable<string>): { readonly candidate: string; readonly difference: string } | undefined {
  for (const candidate of candidates) {
    const difference = nearMiss(given, candidate);
    if (difference !== undefined) return { candidate, difference };
  }
  return undefined;
}
