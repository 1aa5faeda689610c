/**
 * {@link PostgresPaymentLinkStore}: payment links in PostgreSQL, one statement per call. Every
 * read by id or list is scoped by tenant in the statement itself.
 */
import {
  type MemberPath,
  booleanOption,
  deepFreeze,
  formatMemberPath,
  isStorableText,
  optionNames,
  rejectUnknownOptions,
  quote,
  sha256Hex,
} from '../internal/index.js';
import {
  DuplicatePaymentLinkError,
  type LinkClaim,
  type LinkClaimOutcome,
  type LinkCompletion,
  type LinkCompletionOutcome,
  type PaymentLinkStore,
  type RecordedResponse,
  type StoredPaymentLink,
  isUuid,
} from '../payment-links/index.js';
import { errorState, storageFailure } from './database-errors.js';
import { PostgresIdempotencyStore, recordExpiry } from './idempotency-store.js';
import { TABLES } from './schema.js';
import {
  type SqlClient,
  type SqlRow,
  checkClient,
  checkStatementTimeout,
  jsonColumn,
  queryPreparedWithin,
  queryWithin,
} from './sql-client.js';

/** The members of {@link PostgresPaymentLinkStoreOptions}: any other is refused, naming the nearest. */
const POSTGRES_PAYMENT_LINK_STORE_OPTION_NAMES = optionNames<PostgresPaymentLinkStoreOptions>({
  statementTimeout: true,
  preparedStatements: true,
});

const UNIQUE_VIOLATION = '23505';

/** Options of {@link PostgresPaymentLinkStore}. */
export interface PostgresPaymentLinkStoreOptions {
  /**
   * Milliseconds each statement may take, the wait for a pooled connection included; past it
   * the call fails with `StorageUnavailableError` (503 `storage_unavailable`) and the connection is
   * destroyed. 10 to 600 000.
   * @default 5000
   */
  readonly statementTimeout?: number | undefined;
  /**
   * On a `pg.Pool`, the statement that stores a new link (and records its idempotency key) is a
   * named prepared statement: each connection has the server parse and plan it once, instead of
   * at every link. Behind a pooler in transaction mode that does not track prepared statements
   * (PgBouncer before 1.21, or with `max_prepared_statements = 0`), the server answers that a
   * statement is missing or exists already, before it runs: the store then sends that link, and
   * every statement after it, whole. `false` sends them whole from the start.
   * @default true
   */
  readonly preparedStatements?: boolean | undefined;
}

const INSERT_LINK = `INSERT INTO ${TABLES.links} (id, tenant, link_code, record) VALUES ($1, $2, $3, $4)`;

/**
 * One statement: `keyStatement` (its parameters from `$5`, `$1` the link's id) writes the
 * idempotency record, one row or none (`RETURNING 1`); the link is inserted once per row it wrote,
 * so only when it wrote one, and its `RETURNING 1` says whether both were. (No `EXISTS` nor outer
 * `count(*)`: they were a quarter of its planning, where it is not prepared.)
 */
function insertKeyed(keyStatement: string): string {
  return `WITH keyed AS (${keyStatement}) INSERT INTO ${TABLES.links} (id, tenant, link_code, record) SELECT $1, $2, $3, $4 FROM keyed RETURNING 1`;
}

/** A statement storing a link with its key's record, and what it is prepared as. */
interface KeyedStatement {
  /** The start of its prepared name. */
  readonly kind: string;
  readonly text: string;
}

const preparedNames = new Map<KeyedStatement, Promise<string>>();

/**
 * The name `statement` is prepared under, made once: its kind and the first 12 hex digits of its
 * text's SHA-256, so that through a pooler that shares server connections between clients, one
 * name only ever runs one text, whichever version of this package prepared it.
 */
function preparedName(statement: KeyedStatement): Promise<string> {
  let name = preparedNames.get(statement);
  if (name === undefined) {
    name = sha256Hex(statement.text).then((digest) => `${statement.kind}_${digest.slice(0, 12)}`);
    preparedNames.set(statement, name);
  }
  return name;
}

/**
 * What the server answers when the connection a named statement reaches does not hold it
 * (`26000`), or holds one of that name from another client (`42P05`): a pooler in transaction mode
 * that does not track prepared statements. Either way the statement did not run.
 */
const PREPARED_STATEMENT_UNTRACKED = new Set(['26000', '42P05']);

/** A new key recorded completed with its link: nothing written when the key has a record. */
const INSERT_CLAIMING: KeyedStatement = {
  kind: 'paygate_link_claiming',
  text: insertKeyed(
    `INSERT INTO ${TABLES.idempotency} (tenant, key, state, fingerprint, expires_at, response, link_id) VALUES ($5, $6, 'completed', $7, $8, $9, $1) ON CONFLICT (tenant, key) DO NOTHING RETURNING 1`,
  ),
};

/** A pending lease completed with its link: nothing written when the lease was lost. */
const INSERT_COMPLETING: KeyedStatement = {
  kind: 'paygate_link_completing',
  text: insertKeyed(
    `UPDATE ${TABLES.idempotency} SET state = 'completed', response = $7, link_id = $1, lease_expires_at = NULL WHERE tenant = $5 AND key = $6 AND lease = $8 AND state = 'pending' RETURNING 1`,
  ),
};

/**
 * The path of the first text in `value` (a member name, `name`, or a string) PostgreSQL cannot read
 * as a field of a JSON record ({@link isStorableText}: the text the handler takes; a store called
 * directly is given anything), and that text.
 */
function unstorable(value: unknown, path: (string | number)[]): { path: MemberPath; text: string; name?: true } | undefined {
  if (typeof value === 'string') return isStorableText(value) ? undefined : { path, text: value };
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [name, member] of Object.entries(value)) {
    const step = Array.isArray(value) ? Number(name) : name;
    if (!isStorableText(name)) return { path, text: name, name: true };
    const found = unstorable(member, [...path, step]);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * SQLSTATEs of a link PostgreSQL cannot read a field of: U+0000 (`22P05`) or a lone surrogate
 * (`22P02`) in a member name or a string of its record (the table's constraint reads its fields).
 */
const UNREADABLE_TEXT: ReadonlySet<string> = new Set(['22P05', '22P02']);

/**
 * `error`, the server's refusal of `link`, as a `TypeError` naming the field that holds U+0000 or
 * a lone surrogate (`link.description`, say) and the text found, the refusal as its `cause`; the
 * handler refuses such a request, a store called directly names the field here. Looked for only
 * once the server refused: nothing is added to a link stored.
 */
function unstorableLink(method: string, link: StoredPaymentLink, error: unknown): unknown {
  if (!UNREADABLE_TEXT.has(errorState(error) ?? '')) return error;
  const found = unstorable(link, ['link']);
  if (found === undefined) return error;
  return new TypeError(
    `PostgresPaymentLinkStore.${method}: ${formatMemberPath(found.path)}${found.name ? ' member names' : ''} must be text without U+0000 or a lone surrogate (PostgreSQL cannot read a field of such a record), got ${quote(found.text)}: remove it from the link; nothing was stored`,
    { cause: error },
  );
}

function duplicate(link: StoredPaymentLink, cause: unknown): DuplicatePaymentLinkError {
  return new DuplicatePaymentLinkError(`A payment link with id ${link.id} or its link code exists already`, { cause });
}

/**
 * The recorded response without its body: the idempotency record names the link instead
 * (`link_id`), whose record gives the body back at a replay. Each link is written once.
 */
function responseWithoutBody(response: RecordedResponse): string {
  return JSON.stringify({ status: response.status, headers: response.headers });
}

function toLink(row: SqlRow | undefined): StoredPaymentLink | null {
  return row === undefined ? null : deepFreeze(jsonColumn(row.record) as StoredPaymentLink);
}

/**
 * A {@link PaymentLinkStore} on PostgreSQL (run {@link migrate} first). Links are kept whole as
 * `json` (members in their order), keyed by id, tenant and link code.
 *
 * @example
 * ```ts
 * const pool = new pg.Pool(poolSettings(process.env.DATABASE_URL));
 * await migrate(pool);
 * const createLink = createPaymentLinkHandler({
 *   payPageUrl, directory,
 *   store: new PostgresPaymentLinkStore(pool),
 *   idempotency: new PostgresIdempotencyStore(pool),
 * });
 * ```
 */
export class PostgresPaymentLinkStore implements PaymentLinkStore {
  /** The client statements run on. */
  readonly db: SqlClient;
  readonly #statementTimeout: number;
  #prepared: boolean;

  /** @param db A `pg.Pool`, a `pg.Client` or PGlite. */
  constructor(db: SqlClient, options: PostgresPaymentLinkStoreOptions = {}) {
    rejectUnknownOptions('PostgresPaymentLinkStore', options, POSTGRES_PAYMENT_LINK_STORE_OPTION_NAMES);
    this.db = checkClient(db, 'PostgresPaymentLinkStore');
    this.#statementTimeout = checkStatementTimeout(options.statementTimeout, 'PostgresPaymentLinkStore');
    this.#prepared = booleanOption('PostgresPaymentLinkStore', 'preparedStatements', options.preparedStatements, true);
  }

  /** Runs `statement`: a {@link KeyedStatement} as a named prepared statement while this store uses them. */
  async #query(doing: string, statement: string | KeyedStatement, params: unknown[]): Promise<SqlRow[]> {
    const text = typeof statement === 'string' ? statement : statement.text;
    try {
      if (typeof statement !== 'string' && this.#prepared) {
        const prepared = await this.#prepare(await preparedName(statement), text, params);
        if (prepared !== undefined) return prepared;
      }
      return (await queryWithin(this.db, this.#statementTimeout, text, params)).rows;
    } catch (error) {
      throw storageFailure(error, doing);
    }
  }

  /**
   * `text` run as the named statement `name`; `undefined`, with named statements off for the rest
   * of this store's life, when the server says the connection does not track them (nothing ran).
   */
  async #prepare(name: string, text: string, params: unknown[]): Promise<SqlRow[] | undefined> {
    try {
      return (await queryPreparedWithin(this.db, this.#statementTimeout, name, text, params)).rows;
    } catch (error) {
      if (!PREPARED_STATEMENT_UNTRACKED.has(errorState(error) ?? '')) throw error;
      this.#prepared = false;
      return undefined;
    }
  }

  async insert(link: StoredPaymentLink): Promise<void> {
    try {
      await this.#query('storing a payment link', INSERT_LINK, [link.id, link.tenant, link.link_code, JSON.stringify(link)]);
    } catch (error) {
      if (errorState(error) === UNIQUE_VIOLATION) throw duplicate(link, error);
      throw unstorableLink('insert', link, error);
    }
  }

  /**
   * Stores `link` and completes the lease in one statement when `completion.idempotency` is a
   * {@link PostgresIdempotencyStore} on the same client; `unsupported` otherwise.
   */
  async insertCompleting(link: StoredPaymentLink, completion: LinkCompletion): Promise<LinkCompletionOutcome> {
    const { idempotency, lease, response } = completion;
    if (!this.#joins(idempotency)) return 'unsupported';
    const stored = await this.#insertWith('insertCompleting', link, INSERT_COMPLETING, [
      lease.tenant,
      lease.key,
      responseWithoutBody(response),
      lease.id,
    ]);
    return stored ? 'stored' : 'lease_lost';
  }

  /**
   * Records the key completed and stores `link` in one statement (one commit) when
   * `claim.idempotency` is a {@link PostgresIdempotencyStore} on the same client and no record
   * holds the key; `key_taken` (nothing written) when one does, live or expired; `unsupported`
   * otherwise. Two instances claiming one new key at once: one stores, the other waits for its
   * commit and answers `key_taken`.
   */
  async insertClaiming(link: StoredPaymentLink, claim: LinkClaim): Promise<LinkClaimOutcome> {
    const { idempotency, claim: request, response } = claim;
    if (!this.#joins(idempotency)) return 'unsupported';
    const stored = await this.#insertWith('insertClaiming', link, INSERT_CLAIMING, [
      request.tenant,
      request.key,
      request.fingerprint,
      recordExpiry(request),
      responseWithoutBody(response),
    ]);
    return stored ? 'stored' : 'key_taken';
  }

  /** `true` when `idempotency` keeps its records on this store's client, so one statement can write both. */
  #joins(idempotency: LinkCompletion['idempotency']): boolean {
    return idempotency instanceof PostgresIdempotencyStore && idempotency.db === this.db;
  }

  /**
   * One statement ({@link INSERT_CLAIMING}, {@link INSERT_COMPLETING}): `keyParams` are its
   * parameters from `$5`. Resolves whether it stored the link (and wrote the key's record).
   */
  async #insertWith(method: string, link: StoredPaymentLink, statement: KeyedStatement, keyParams: unknown[]): Promise<boolean> {
    let rows: SqlRow[];
    try {
      const params = [link.id, link.tenant, link.link_code, JSON.stringify(link), ...keyParams];
      rows = await this.#query('storing a payment link', statement, params);
    } catch (error) {
      if (errorState(error) === UNIQUE_VIOLATION) throw duplicate(link, error);
      throw unstorableLink(method, link, error);
    }
    return rows.length === 1;
  }

  async get(tenant: string, id: string): Promise<StoredPaymentLink | null> {
    if (!isUuid(id)) return null;
    const rows = await this.#query('reading a payment link', `SELECT record FROM ${TABLES.links} WHERE id = $1 AND tenant = $2`, [
      id,
      tenant,
    ]);
    return toLink(rows[0]);
  }

  async getByCode(code: string): Promise<StoredPaymentLink | null> {
    const rows = await this.#query('reading a payment link', `SELECT record FROM ${TABLES.links} WHERE link_code = $1`, [code]);
    return toLink(rows[0]);
  }

  async list(tenant: string): Promise<readonly StoredPaymentLink[]> {
    const rows = await this.#query('listing payment links', `SELECT record FROM ${TABLES.links} WHERE tenant = $1 ORDER BY seq`, [tenant]);
    return rows.map((row) => toLink(row) as StoredPaymentLink);
  }
}
