/**
 * The JOSE header rules, in order: `alg` on the allow-list, `kid` present, `typ` (when
 * present) `JWT` or `at+jwt`, no `crit`. `jku`, `x5u`, `jwk` and `x5c` are never read: keys come only
 * from the registered issuer's JWKS.
 */
import { AuthError, type RuleTrace } from './errors.js';

/** The `typ` values accepted (any case, `application/` prefix allowed), when `typ` is present. */
const TYPES = Object.freeze(['JWT', 'at+jwt']);

/** The algorithms a verifier may be configured to accept: RSA signatures only. */
export const RSA_ALGORITHMS = Object.freeze(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'] as const);

/** An RSA signature algorithm. */
export type RsaAlgorithm = (typeof RSA_ALGORITHMS)[number];

/** The header fields verification goes on with. */
export interface CheckedHeader {
  readonly alg: RsaAlgorithm;
  readonly kid: string;
}

/** Longest `kid` accepted. */
export const MAX_KID_LENGTH = 256;

function isAllowedTyp(typ: string): boolean {
  const lower = typ.toLowerCase();
  const bare = lower.startsWith('application/') ? lower.slice('application/'.length) : lower;
  return bare === 'jwt' || bare === 'at+jwt';
}

/** Applies the header rules. @throws {AuthError} the first rule broken. */
export function checkJoseHeader(header: Record<string, unknown>, algorithms: ReadonlySet<string>, trace?: RuleTrace): CheckedHeader {
  const { alg, kid, typ } = header;
  if (typeof alg !== 'string' || !algorithms.has(alg)) {
    const expected = [...algorithms];
    throw new AuthError('unsupported_algorithm', `The token's "alg" must be one of ${expected.join(', ')}.`, {
      facts: { code: 'unsupported_algorithm', rule: 'alg', expected, actual: alg },
    });
  }
  trace?.({ rule: 'alg', passed: true, expected: [...algorithms], actual: alg });
  if (typeof kid !== 'string' || kid === '' || kid.length > MAX_KID_LENGTH) {
    const facts = { code: 'missing_kid', rule: 'kid', expected: MAX_KID_LENGTH, actual: kid } as const;
    const message = `The token header must name its signing key in "kid", a string of 1 to ${MAX_KID_LENGTH} characters.`;
    throw new AuthError('missing_kid', message, { facts });
  }
  trace?.({ rule: 'kid', passed: true, expected: MAX_KID_LENGTH, actual: kid });
  if (typ !== undefined && (typeof typ !== 'string' || !isAllowedTyp(typ))) {
    throw new AuthError('invalid_typ', 'The token\'s "typ" must be "JWT" or "at+jwt".', {
      facts: { code: 'invalid_typ', rule: 'typ', expected: TYPES, actual: typ },
    });
  }
  trace?.({ rule: 'typ', passed: true, expected: TYPES, actual: typ });
  if (Object.hasOwn(header, 'crit')) {
    throw new AuthError('unsupported_crit', 'The token header carries "crit"; no extension is supported.', {
      facts: { code: 'unsupported_crit', rule: 'crit', actual: header.crit },
    });
  }
  trace?.({ rule: 'crit', passed: true });
  return { alg: alg as RsaAlgorithm, kid };
}
