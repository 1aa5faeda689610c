/**
 * The rows of the registry table, each checked on its own with the registry's own entry rules: a
 * row the registry refuses is left out and named with the rule it breaks, and the others apply.
 * Fail closed: an issuer that a refused row names (its key, or its entry's issuer) is left out
 * too, so its tokens are refused as unknown (`unknown_issuer`) rather than verified by an entry
 * other than the one the table means. Every instance, and `issuers list`, judge the rows here.
 *
 * The rows are held, so that a change is judged by looking at the rows it touches only: the rows
 * changed, and the rows keyed by an issuer that a refused row names or stops naming (a row that
 * now collides with another, or no longer does).
 */
import { IssuerRegistry, type RegisteredIssuer, type RegistryChange } from '../index.js';
import { capHint, checkIssuerEntry, deriveRegistry, quote } from '../internal/index.js';
import { MAX_ISSUER_LENGTH } from './schema-names.js';

/**
 * Why `issuer` (found at `where`, such as `entries[0].issuer`) is too long for the registry table,
 * naming its length and the limit; `undefined` when it is not. The one rule of the writers and of
 * every follower.
 */
export function issuerTooLong(where: string, issuer: string): string | undefined {
  if (issuer.length <= MAX_ISSUER_LENGTH) return undefined;
  return `${where} must be at most ${MAX_ISSUER_LENGTH} characters (the longest issuer an operator control and the key history take), got ${issuer.length} characters: register the integration under a shorter issuer`;
}

/**
 * Why a row is left out:
 * - `invalid_entry`: its entry breaks a rule of the registry (a bad or unknown field, named in
 *   the reason), or its key is longer than `MAX_ISSUER_LENGTH` (written before the table held it);
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

/** What the rows add up to: the registry of the rows accepted, and those refused. */
export interface CheckedRows {
  readonly registry: IssuerRegistry;
  /** Every row left out: those that break a rule of their own first, then repeated issuers, each by key. */
  readonly refused: readonly RefusedRow[];
}

/** What one {@link RegistryRows.apply} changed. */
export interface AppliedRows extends CheckedRows {
  /** What changed in the registry, by `iss`. */
  readonly change: RegistryChange;
  /** The issuers whose entry was put in or taken out (the rows looked at), for a digest kept up to date. */
  readonly touched: readonly string[];
  /** The rows left out among those looked at, in the order of `refused`: what to report now. */
  readonly judged: readonly RefusedRow[];
}

/** A row as judged on its own: its checked issuer, or why it fails. */
type OwnCheck =
  | { readonly checked: RegisteredIssuer; readonly failure?: undefined }
  | {
      readonly checked?: undefined;
      readonly failure: { readonly rule: 'invalid_entry' | 'key_mismatch'; readonly reason: string };
      /** The issuer its entry names, when it names one. */
      readonly named: string | undefined;
    };

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

function byRow(a: RefusedRow, b: RefusedRow): number {
  const own = Number(a.rule === 'repeated_issuer') - Number(b.rule === 'repeated_issuer');
  return own !== 0 ? own : a.row < b.row ? -1 : a.row > b.row ? 1 : 0;
}

/** The registry table's rows as held by one reader, judged as they change. Never throws for a row's content. */
export class RegistryRows {
  readonly #allowedHosts: ReadonlySet<string>;
  readonly #rows = new Map<string, OwnCheck>();
  /** Issuers named by a row that fails on its own (its key, its entry's issuer), and by which rows. */
  readonly #tainted = new Map<string, Set<string>>();
  readonly #refused = new Map<string, RefusedRow>();
  #registry: IssuerRegistry;

  /** `jwksAllowedHosts`: the JWKS hosts allowed although special-purpose, as the instance's registry allows them. */
  constructor(jwksAllowedHosts: readonly string[] = []) {
    this.#allowedHosts = new Set(jwksAllowedHosts);
    this.#registry = new IssuerRegistry([], { allowEmpty: true, jwksAllowedHosts });
  }

  /** The registry of the rows accepted. */
  get registry(): IssuerRegistry {
    return this.#registry;
  }

  /** Every row left out, and why. */
  get refused(): RefusedRow[] {
    return [...this.#refused.values()].sort(byRow);
  }

  /** The keys of the rows held. */
  keys(): IterableIterator<string> {
    return this.#rows.keys();
  }

  /**
   * Takes in `changed` (rows added or replaced) and takes out the rows keyed `removed`, then
   * judges the rows these touch; the others are as they were.
   */
  apply(changed: readonly RegistryRow[], removed: Iterable<string> = []): AppliedRows {
    const affected = new Set<string>();
    for (const key of removed) {
      this.#forget(key, affected);
      this.#rows.delete(key);
    }
    for (const row of changed) {
      this.#forget(row.issuer, affected);
      const own = this.#check(row);
      this.#rows.set(row.issuer, own);
      affected.add(row.issuer);
      if (own.failure !== undefined) {
        this.#taint(row.issuer, row.issuer, affected);
        if (own.named !== undefined) this.#taint(own.named, row.issuer, affected);
      }
    }
    const upserts: RegisteredIssuer[] = [];
    const removals: string[] = [];
    const judged: RefusedRow[] = [];
    for (const key of affected) {
      const refusal = this.#judge(key);
      if (refusal === undefined) {
        this.#refused.delete(key);
        const own = this.#rows.get(key);
        if (own?.checked === undefined) removals.push(key);
        else upserts.push(own.checked);
        continue;
      }
      this.#refused.set(key, refusal);
      judged.push(refusal);
      removals.push(key);
    }
    const registry = deriveRegistry(this.#registry, upserts, removals);
    const change = this.#registry.changesTo(registry);
    this.#registry = registry;
    return { registry, refused: this.refused, change, touched: [...affected], judged: judged.sort(byRow) };
  }

  /** Why the row keyed `key` is left out now, or `undefined` when it applies (or is not held). */
  #judge(key: string): RefusedRow | undefined {
    const own = this.#rows.get(key);
    if (own === undefined) return undefined;
    if (own.failure !== undefined) return { row: key, ...own.failure };
    const naming = this.#tainted.get(key);
    if (naming === undefined) return undefined;
    const others = [...naming].slice(0, 3).map(quote);
    return {
      row: key,
      rule: 'repeated_issuer',
      reason: capHint(`another row (${others.join(', ')}) names issuer ${quote(key)} too: neither applies until one is removed`),
    };
  }

  #check(row: RegistryRow): OwnCheck {
    const where = `row ${quote(row.issuer)}`;
    const long = issuerTooLong(`${where} key`, row.issuer);
    if (long !== undefined) return { failure: { rule: 'invalid_entry', reason: capHint(long) }, named: namedIssuer(row.entry) };
    try {
      const checked = checkIssuerEntry(row.entry, where, this.#allowedHosts);
      if (checked.issuer === row.issuer) return { checked };
      return {
        failure: {
          rule: 'key_mismatch',
          reason: `${where} holds the entry of issuer ${quote(checked.issuer)}: a row's key must be its entry's issuer`,
        },
        named: checked.issuer,
      };
    } catch (error) {
      return { failure: { rule: 'invalid_entry', reason: reasonOf(error) }, named: namedIssuer(row.entry) };
    }
  }

  /** The row keyed `key` is about to change or go: what it tainted is untainted, and looked at again. */
  #forget(key: string, affected: Set<string>): void {
    affected.add(key);
    const own = this.#rows.get(key);
    if (own?.failure === undefined) return;
    for (const issuer of [key, own.named]) {
      if (issuer === undefined) continue;
      affected.add(issuer);
      const naming = this.#tainted.get(issuer);
      naming?.delete(key);
      if (naming?.size === 0) this.#tainted.delete(issuer);
    }
  }

  #taint(issuer: string, row: string, affected: Set<string>): void {
    affected.add(issuer);
    const naming = this.#tainted.get(issuer);
    if (naming === undefined) this.#tainted.set(issuer, new Set([row]));
    else naming.add(row);
  }
}

/**
 * Checks each row on its own; never throws for a row's content. `jwksAllowedHosts` are the JWKS
 * hosts allowed although special-purpose, as the instance's registry allows them.
 */
export function checkRegistryRows(rows: readonly RegistryRow[], jwksAllowedHosts: readonly string[] = []): CheckedRows {
  const { registry, refused } = new RegistryRows(jwksAllowedHosts).apply(rows);
  return { registry, refused };
}
