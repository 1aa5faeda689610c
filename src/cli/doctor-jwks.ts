/**
 * The doctor's JWKS: loaded once from a URL or a file, with the gateway's limits, and the rules
 * that make a published key usable (a key breaking one is ignored by the gateway).
 *
 * @module paygate-auth/cli
 */
import { base64url } from 'jose';
import { findDuplicateMember, formatMemberPath } from '../core/duplicate-members.js';
import { rejectReason } from '../core/jwk.js';

/** A JWKS as loaded: its `keys`, or why it could not be. */
export type JwksLoad =
  | { readonly ok: true; readonly where: string; readonly text: string; readonly keys: readonly unknown[] }
  | { readonly ok: false; readonly where: string; readonly reason: string; readonly text?: string };

/** The gateway's limits on a download. */
const TIMEOUT_MS = 5000;
const MAX_BYTES = 262_144;

/** The `fetch` the doctor downloads with. */
export type DoctorFetch = (input: string, init: RequestInit) => Promise<Response>;

function fromText(where: string, text: string): JwksLoad {
  if (new TextEncoder().encode(text).byteLength > MAX_BYTES) return { ok: false, where, reason: `larger than ${MAX_BYTES} bytes`, text };
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return { ok: false, where, reason: 'not JSON', text };
  }
  const repeated = findDuplicateMember(text, document);
  if (repeated !== undefined) return { ok: false, where, reason: `repeats the member ${formatMemberPath(repeated)} (each name may appear once)`, text };
  const keys = (document as { keys?: unknown } | null)?.keys;
  if (typeof document !== 'object' || document === null || !Array.isArray(keys)) return { ok: false, where, reason: 'no "keys" array', text };
  return { ok: true, where, text, keys };
}

/** `true` when `source` is an `http:` or `https:` URL (else it is a file path). */
export function isUrl(source: string): boolean {
  return /^https?:\/\//i.test(source);
}

/** Loads a JWKS from a URL (one GET, no redirects followed, 5 s) or a file. Never rejects. */
export async function loadJwks(source: string, fetcher: DoctorFetch): Promise<JwksLoad> {
  if (!isUrl(source)) {
    const { readFile } = await import('node:fs/promises');
    try {
      return fromText(source, await readFile(source, 'utf8'));
    } catch (error) {
      return { ok: false, where: source, reason: `cannot read the file (${(error as { code?: string }).code ?? 'error'})` };
    }
  }
  try {
    const response = await fetcher(source, { redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS), headers: { accept: 'application/jwk-set+json, application/json' } });
    const text = await response.text();
    if (response.status !== 200) return { ok: false, where: source, reason: `answered HTTP ${response.status}` };
    return fromText(source, text);
  } catch (error) {
    return { ok: false, where: source, reason: error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${TIMEOUT_MS / 1000} s` : `network error (${error instanceof Error ? error.message : String(error)})` };
  }
}

/** Bits of the base64url big-endian modulus `n`. */
export function modulusBits(n: string): number {
  const bytes = base64url.decode(n);
  let start = 0;
  while (start < bytes.length && bytes[start] === 0) start += 1;
  if (start === bytes.length) return 0;
  return (bytes.length - start - 1) * 8 + (32 - Math.clz32(bytes[start] as number));
}

const RS256: ReadonlySet<string> = new Set(['RS256']);

/**
 * Why the gateway would ignore published key `key`, or `null` when it is usable for RS256: the
 * verifier's own key rules, the values at fault named where they help.
 */
export function keyProblem(key: Record<string, unknown>): string | null {
  const reason = rejectReason(key, RS256);
  if (reason === null) return null;
  if (reason === 'kty is not RSA') return `kty is ${JSON.stringify(key.kty)}, not "RSA"`;
  if (reason === 'use is not sig') return `use is ${JSON.stringify(key.use)}, not "sig"`;
  if (reason === 'alg is not accepted') return `alg is ${JSON.stringify(key.alg)}, not "RS256"`;
  if (reason === 'private key material is published') return 'it publishes private key members (remove them, and replace this key: it is compromised)';
  if (reason.startsWith('modulus ')) return `its modulus has ${modulusBits(key.n as string)} bits, ${reason.slice('modulus '.length)}`;
  return reason;
}
