/**
 * The rows of the registry table, each checked on its own with the registry's own entry rules: a
 * row the registry refuses is left out and named with the rule it breaks, and the others apply.
 * Fail closed: an issuer that a refused row names (its key, or its entry's issuer) is left out
 * too, so its tokens are refused as unknown (`unknown_issuer`) rather than verified by an entry
 * other than the one the table means. Every instance, and `issuers list`, judge the rows here.
 */
import { type IssuerEntry, IssuerRegistry } from '../index.js';
import { capHint, checkIssuerEntry, quote } from '../internal/index.js';

/**
 * Why a row is left out:
 * - `invalid_entry`: its entry breaks a rule of the registry (a bad or unknown field, named in
 *   the reason);
 * - `key_mismatch`: its key (the `issuer` column) is not its entry's issuer;
 * - `repeated_issuer`: another row, refused, names its issuer too.
 */
export type RefusedRowRule = 'invalid_entry' | 'key_mismatch' | 'repeated_issuer';

/** A row of the registry table left out, and why. */
export interface RefusedRow {
  /** The row's key (its `issuer` column), as stored: text a table writer chose. */
  readonly row: string;
  readonly rule: RefusedRowRule;
  /** What is wrong, on one line, cut and escaped. */
  readonly reason: string;
}

/** A row as read: its key and its entry, unchecked. */
export interface RegistryRow {
  readonly issuer: string;
  readonly entry: unknown;
}

/** What the rows add up to: the registry of the rows accepted, and those refused, in row order. */
export interface CheckedRows {
  readonly registry: IssuerRegistry;
  readonly refused: readonly RefusedRow[];
}

const PREFIX = 'IssuerRegistry: ';

function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return capHint(message.startsWith(PREFIX) ? message.slice(PREFIX.length) : message);
}

/** The entry's `issuer` member when it is a string (what a row names, even a refused one). */
function namedIssuer(entry: unknown): string | undefined {
  const issuer = typeof entry === 'object' && entry !== null ? (entry as { issuer?: unknown }).issuer : undefined;
  return typeof issuer === 'string' ? issuer : undefined;
}

/**
 * Checks each row on its own; never throws for a row's content. `jwksAllowedHosts` are the JWKS
 * hosts allowed although special-purpose, as the instance's registry allows them.
 */
export function checkRegistryRows(rows: readonly RegistryRow[], jwksAllowedHosts: readonly string[] = []): CheckedRows {
  const allowedHosts = new Set(jwksAllowedHosts);
  const refused: RefusedRow[] = [];
  /** Issuers named by a refused row, and by which rows: none of them applies. */
  const tainted = new Map<string, string[]>();
  const taint = (issuer: string, row: string): void => {
    const rows = tainted.get(issuer);
    if (rows === undefined) tainted.set(issuer, [row]);
    else if (!rows.includes(row)) rows.push(row);
  };
  const candidates: RegistryRow[] = [];
  for (const row of rows) {
    const where = `row ${quote(row.issuer)}`;
    const named = namedIssuer(row.entry);
    let rule: RefusedRowRule | undefined;
    let reason = '';
    try {
      const checked = checkIssuerEntry(row.entry, where, allowedHosts);
      if (checked.issuer !== row.issuer) {
        rule = 'key_mismatch';
        reason = `${where} holds the entry of issuer ${quote(checked.issuer)}: a row's key must be its entry's issuer`;
      }
    } catch (error) {
      rule = 'invalid_entry';
      reason = reasonOf(error);
    }
    if (rule === undefined) {
      candidates.push(row);
      continue;
    }
    refused.push({ row: row.issuer, rule, reason });
    taint(row.issuer, row.issuer);
    if (named !== undefined) taint(named, row.issuer);
  }
  const accepted: IssuerEntry[] = [];
  for (const row of candidates) {
    const naming = tainted.get(row.issuer);
    if (naming === undefined) {
      accepted.push(row.entry as IssuerEntry);
      continue;
    }
    const others = naming.slice(0, 3).map(quote);
    refused.push({
      row: row.issuer,
      rule: 'repeated_issuer',
      reason: capHint(`another row (${others.join(', ')}) names issuer ${quote(row.issuer)} too: neither applies until one is removed`),
    });
  }
  return { registry: new IssuerRegistry(accepted, { allowEmpty: true, jwksAllowedHosts }), refused };
}
