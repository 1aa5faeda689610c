/**
 * Whether an issuer an operator names is registered, as every instance following the registry
 * table judges it: the operator controls refuse one that is not (an issuer with a trailing slash,
 * `not-a-url`), naming the near miss, so that an operator in a hurry never believes an issuer
 * stopped while the real one is still accepted.
 */
import { findNearMiss, quote } from '../internal/index.js';
import { readIssuers } from '../postgres/index.js';
import type { CliDatabase } from './database-url.js';
import { isMissingTable } from '../postgres/internal.js';

/** An issuer named to a command is not one the instances register. */
export class NotRegisteredError extends Error {
  override readonly name = 'NotRegisteredError';
  readonly code = 'issuer_not_registered' as const;
}

const FORCE = 'give --force to record it all the same (a control ahead of its issuer)';

/**
 * Resolves when `issuer` is a row every instance applies; else rejects with a
 * {@link NotRegisteredError} naming what the registry holds instead (a near miss) and the remedy.
 */
export async function requireRegistered(db: CliDatabase, issuer: string): Promise<void> {
  let records: Awaited<ReturnType<typeof readIssuers>>;
  try {
    records = await readIssuers(db, { statementTimeout: db.statementTimeout });
  } catch (error) {
    if (!isMissingTable(error)) throw error;
    throw new NotRegisteredError(
      `cannot tell whether issuer ${quote(issuer)} is registered: the issuer registry's tables are missing (run "paygate-auth migrate" first, or ${FORCE})`,
    );
  }
  const record = records.find((held) => held.issuer === issuer);
  if (record?.refused === null) return;
  if (record !== undefined && record.refused !== null) {
    throw new NotRegisteredError(
      `issuer ${quote(issuer)} is in the registry table but every instance leaves its row out (${record.refused.rule}): it is refused already; fix the row, or ${FORCE}`,
    );
  }
  const registered = records.filter((held) => held.refused === null).map((held) => held.issuer);
  throw new NotRegisteredError(`issuer ${quote(issuer)} is not registered; ${notRegisteredHint(issuer, registered)}, or ${FORCE}`);
}

/**
 * What to give in place of `issuer`, which `registered` lacks: the near miss it holds (`the
 * registry has "https://auth.acme.example" (a trailing slash): give that`), else how many it holds
 * and where to list them. So an operator who mistypes an issuer never takes it for one not registered.
 */
export function notRegisteredHint(issuer: string, registered: readonly string[]): string {
  const near = findNearMiss(issuer, registered);
  return near === undefined
    ? `the registry holds ${registered.length} issuer(s) ("paygate-auth issuers list")`
    : `the registry has ${quote(near.candidate)} (${near.difference}): give that`;
}

/**
 * `issuer "…" is not registered; <what to give>`, naming the near miss among the issuers the
 * registry table holds now.
 */
export async function notRegisteredError(db: CliDatabase, issuer: string): Promise<NotRegisteredError> {
  const registered = (await readIssuers(db, { statementTimeout: db.statementTimeout })).map((held) => held.issuer);
  return new NotRegisteredError(`issuer ${quote(issuer)} is not registered; ${notRegisteredHint(issuer, registered)}`);
}
