/**
 * The check `issuers add` and `issuers update` make before writing an entry: the gateway's own
 * check (the doctor's, {@link gatewayCheck}) on a registry of just this entry downloads its
 * JWKS, and a set it would not use (unreachable, not JSON, no usable key) is refused with the
 * verifier's reason, unless forced; a sample token, when given, must then verify.
 */
import type { FetchLike, IssuerEntry, JwksFetchEvent } from '../index.js';
import { DEFAULT_JWKS_TIMEOUT, quote } from '../internal/index.js';
import { checkRegistry, gatewayCheck, ignoredText, jwksTimeoutHint } from './gateway-check.js';

/**
 * Why an entry was refused: `jwks_address_refused` (its JWKS host resolves to a special-purpose
 * address), `jwks_unavailable` (no set could be read), `no_usable_key`, `token_rejected`.
 */
export type IssuerRefusalCode = 'jwks_address_refused' | 'jwks_unavailable' | 'no_usable_key' | 'token_rejected';

/** The entry was refused: nothing was written. The message names why, from the verifier. */
export class IssuerRefusedError extends Error {
  override readonly name = 'IssuerRefusedError';
  readonly code: IssuerRefusalCode;

  constructor(code: IssuerRefusalCode, why: string, forcible: boolean) {
    super(`refused, nothing written: ${why}${forcible ? ' (--force writes it anyway)' : ''}`);
    this.code = code;
  }
}

/** What {@link checkCandidate} checks, and how. */
export interface CandidateCheck {
  /** The entry to write (unchecked: the registry's rules run first). */
  readonly entry: IssuerEntry;
  /** A sample token of the integration, verified as the gateway would. */
  readonly token?: string | undefined;
  /** The gateway service's audiences, for the sample token. */
  readonly audience: readonly string[];
  /**
   * Writes the entry even when its JWKS would not be used (a sample token must still verify, and
   * a JWKS host that resolves to a special-purpose address is refused all the same).
   */
  readonly force: boolean;
  /** JWKS hosts allowed although special-purpose (`--allow-jwks-host`). @default [] */
  readonly allowedHosts?: readonly string[];
  /** @default the verifier's (on Node, one that refuses special-purpose addresses at connection) */
  readonly fetch?: FetchLike | undefined;
  /** Milliseconds since the epoch. */
  readonly now: number;
  /** Seconds the JWKS download may take (`--jwks-timeout`). @default 5, the gateway's jwksTimeout */
  readonly jwksTimeout?: number | undefined;
  /** Where the check's lines go (the doctor's ✓/✗ lines). */
  readonly write: (text: string) => void;
}

/**
 * An audience for the candidate verifier when no sample token is checked: the verifier needs one,
 * and downloading keys never compares it.
 */
const NO_TOKEN_AUDIENCE = 'https://issuers-check.paygate-auth.invalid';

/**
 * Checks `check.entry` and its JWKS with the gateway's verifier, then the sample token.
 * @throws {UsageError} when the registry refuses the entry, naming the field.
 * @throws {IssuerRefusedError} when its JWKS would not be used (unless `force`), or the token is rejected.
 */
export async function checkCandidate(check: CandidateCheck): Promise<void> {
  const { entry, write } = check;
  const registry = checkRegistry([entry], check.allowedHosts);
  let download: JwksFetchEvent | undefined;
  const gateway = gatewayCheck(
    {
      registry,
      audience: check.audience.length === 0 ? [NO_TOKEN_AUDIENCE] : check.audience,
      now: check.now,
      fetch: check.fetch,
      jwksTimeout: check.jwksTimeout,
      where: () => entry.jwksUri,
      onDownload: (event) => {
        download = event;
      },
    },
    write,
  );
  const [report] = await gateway.verifier.warmUp();
  let refusal: { code: IssuerRefusalCode; why: string } | undefined;
  if (download?.reason === 'address') {
    // Never written, even forced: every instance would refuse to download from it.
    throw new IssuerRefusedError('jwks_address_refused', report?.error ?? 'the JWKS host is a special-purpose address', false);
  }
  if (report === undefined || !report.ok) {
    const reason = download?.reason === undefined ? '' : ` (${download.reason})`;
    // A timeout is the command's bound: say what sets it, so that an operator in a hurry can wait longer.
    const bound = download?.reason === 'timeout' ? jwksTimeoutHint(check.jwksTimeout ?? DEFAULT_JWKS_TIMEOUT) : '';
    refusal = {
      code: 'jwks_unavailable',
      why: `the JWKS cannot be used: ${quote(entry.jwksUri)}: ${report?.error ?? 'it could not be loaded'}${reason}${bound}`,
    };
  } else if (report.keys === 0) {
    const ignored = download === undefined ? '' : ignoredText(download).replace(/^; /, ': ');
    refusal = { code: 'no_usable_key', why: `no usable key in the JWKS${ignored || ': it lists no key'}` };
  }
  if (refusal !== undefined) {
    if (!check.force) throw new IssuerRefusedError(refusal.code, refusal.why, true);
    write(`--force: ${refusal.why}; written anyway\n`);
  }
  if (check.token === undefined) return;
  const rejection = await gateway.check(check.token);
  if (rejection !== null) {
    const { error } = rejection;
    throw new IssuerRefusedError('token_rejected', `the sample token is rejected: ${error.code}: ${error.hint ?? error.message}`, false);
  }
  write('✓ the sample token verifies\n');
}
