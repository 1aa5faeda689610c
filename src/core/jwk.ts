/**
 * Which keys of a JWKS may verify: `kty` `RSA`, `use` absent or `sig`, `alg` absent or
 * an accepted algorithm, a `kid`, `key_ops` absent or an array including `verify`, an odd modulus
 * of at least 2048 bits. A key breaking a rule is ignored; the rest of the set still counts.
 */
import { decodeBase64Url, isBase64Url } from './base64url.js';
import { quote, quoteList } from './hint-text.js';
import { isJsonObject } from './json-object.js';
import { MAX_KID_LENGTH } from './jose-header.js';

/** An RSA public key as published, reduced to the members verification reads. */
export interface RsaPublicJwk {
  readonly kty: 'RSA';
  readonly kid: string;
  readonly n: string;
  readonly e: string;
  readonly alg?: string;
  readonly use?: 'sig';
}

/** Smallest modulus accepted, in bits. */
export const MIN_MODULUS_BITS = 2048;
/** Largest modulus accepted, in bits (bounds the cost of one verification). */
export const MAX_MODULUS_BITS = 8192;

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth'] as const;

/** Bits in the big-endian unsigned integer `bytes`. */
function bitLength(bytes: Uint8Array): number {
  let start = 0;
  while (start < bytes.length && bytes[start] === 0) start += 1;
  if (start === bytes.length) return 0;
  return (bytes.length - start - 1) * 8 + (32 - Math.clz32(bytes[start] as number));
}

function isUsableExponent(bytes: Uint8Array): boolean {
  const bits = bitLength(bytes);
  if (bits < 2 || bits > 32) return false;
  const last = bytes[bytes.length - 1] as number;
  return (last & 1) === 1;
}

/** What is wrong with a JWKS entry's `kid` (one no token can name), or `null`. */
function kidFault(kid: unknown): string | null {
  if (kid === undefined) return 'kid is missing';
  if (typeof kid !== 'string') return 'kid is not a string';
  if (kid === '') return 'kid is empty';
  return kid.length > MAX_KID_LENGTH ? `kid is longer than ${MAX_KID_LENGTH} characters` : null;
}

/** Why a key was ignored, or `null` when it is usable. */
export function rejectReason(key: unknown, algorithms: ReadonlySet<string>): string | null {
  if (!isJsonObject(key)) return 'not an object';
  if (key.kty !== 'RSA') return 'kty is not RSA';
  if (key.use !== undefined && key.use !== 'sig') return 'use is not sig';
  if (key.alg !== undefined && typeof key.alg !== 'string') return 'alg is not a string';
  if (key.alg !== undefined && !algorithms.has(key.alg))
    return `published for alg ${quote(key.alg)}, not one accepted (${quoteList([...algorithms])})`;
  const kidProblem = kidFault(key.kid);
  if (kidProblem !== null) return kidProblem;
  if (key.key_ops !== undefined && !Array.isArray(key.key_ops)) return 'key_ops is not an array';
  if (Array.isArray(key.key_ops) && !key.key_ops.includes('verify')) return 'key_ops excludes verify';
  if (PRIVATE_MEMBERS.some((member) => member in key)) return 'private key material is published';
  if (typeof key.n !== 'string' || !isBase64Url(key.n)) return 'n is not base64url';
  if (typeof key.e !== 'string' || !isBase64Url(key.e)) return 'e is not base64url';
  const modulus = decodeBase64Url(key.n);
  const bits = bitLength(modulus);
  if (bits < MIN_MODULUS_BITS) return `modulus of ${bits} bits, under ${MIN_MODULUS_BITS}`;
  if (bits > MAX_MODULUS_BITS) return `modulus of ${bits} bits, over ${MAX_MODULUS_BITS}`;
  // An RSA modulus is the product of two odd primes: an even one is no RSA key (2 divides it).
  if (((modulus[modulus.length - 1] as number) & 1) === 0) return 'modulus is even';
  if (!isUsableExponent(decodeBase64Url(key.e))) return 'exponent is not an odd number from 3 to 2^32';
  return null;
}

/** A JWKS entry the verifier ignored, and the key rule it broke. */
export interface IgnoredKey {
  /** The entry's `kid`, when it has one a token could name (a string of 1 to 256 characters); hostile text. */
  readonly kid?: string;
  /** The rule it broke, in words: `modulus of 1024 bits, under 2048`, `use is not sig`… (any JWKS text in it quoted and escaped). */
  readonly reason: string;
}

/** Most {@link IgnoredKey}s described per JWKS; the rest are only counted. */
const MAX_IGNORED_DESCRIBED = 20;

/** The outcome of reading a JWKS document's keys. */
export interface KeySelection {
  /** Usable keys by `kid`. */
  readonly keys: ReadonlyMap<string, RsaPublicJwk>;
  /** How many entries were ignored. */
  readonly ignored: number;
  /** Why, for the first {@link MAX_IGNORED_DESCRIBED} of them, in the order of the set. */
  readonly reasons: readonly IgnoredKey[];
}

/** The `kid` of `entry` worth naming: one a token could carry. */
function namedKid(entry: unknown): string | undefined {
  const kid = isJsonObject(entry) ? entry.kid : undefined;
  return typeof kid === 'string' && kid !== '' && kid.length <= MAX_KID_LENGTH ? kid : undefined;
}

/** Describes one more ignored entry, up to {@link MAX_IGNORED_DESCRIBED}. */
export function noteIgnored(reasons: IgnoredKey[], entry: unknown, reason: string): void {
  if (reasons.length >= MAX_IGNORED_DESCRIBED) return;
  const kid = namedKid(entry);
  reasons.push(Object.freeze(kid === undefined ? { reason } : { kid, reason }));
}

function reduce(key: Record<string, unknown>): RsaPublicJwk {
  return Object.freeze({
    kty: 'RSA',
    kid: key.kid as string,
    n: key.n as string,
    e: key.e as string,
    ...(key.alg === undefined ? {} : { alg: key.alg as string }),
    ...(key.use === undefined ? {} : { use: 'sig' as const }),
  });
}

function sameKey(a: RsaPublicJwk, b: RsaPublicJwk): boolean {
  return a.n === b.n && a.e === b.e && a.alg === b.alg;
}

const AMBIGUOUS_KID = 'another key has the same kid';

/**
 * The usable keys of a JWKS `keys` array, and why each other entry was ignored. Two different
 * keys under one `kid` are ambiguous: both are ignored.
 */
export function selectUsableKeys(entries: readonly unknown[], algorithms: ReadonlySet<string>): KeySelection {
  const keys = new Map<string, RsaPublicJwk>();
  const ambiguous = new Set<string>();
  const reasons: IgnoredKey[] = [];
  let ignored = 0;
  for (const entry of entries) {
    const reason = rejectReason(entry, algorithms);
    if (reason !== null) {
      ignored += 1;
      noteIgnored(reasons, entry, reason);
      continue;
    }
    const key = reduce(entry as Record<string, unknown>);
    const seen = keys.get(key.kid);
    if (seen === undefined && !ambiguous.has(key.kid)) keys.set(key.kid, key);
    else if (seen === undefined || !sameKey(seen, key)) {
      ambiguous.add(key.kid);
      ignored += seen === undefined ? 1 : 2;
      if (seen !== undefined) noteIgnored(reasons, seen, AMBIGUOUS_KID);
      noteIgnored(reasons, key, AMBIGUOUS_KID);
      keys.delete(key.kid);
    } else {
      ignored += 1;
      noteIgnored(reasons, key, 'the same key is listed twice');
    }
  }
  return { keys, ignored, reasons };
}
