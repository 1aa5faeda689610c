/**
 * Resource names: tenant ERNs, user references and relative references.
 *
 * - Tenant: `ern:<product>/tenants/<tenant-id>`; tenant id `public` is the public tenant.
 * - User: `ern:<product>/tenants/<tenant-id>/users/<user-id>`, `ern:<product>/tenants/users/<user-id>`,
 *   `//users/<user-id>`, or, for a system actor, the public tenant's ERN.
 * - Relative: `//departments/<id>`, `//customers/<id>`, `//users/<id>`.
 *
 * Every name part is non-empty, case-sensitive, at most {@link MAX_NAME_PART_LENGTH} characters of
 * letters, digits, `-`, `_` and `.`. Parsers return frozen objects or throw {@link ErnError}.
 */
import { quote } from './hint-text.js';

/** The tenant id of a product acting as itself. */
export const PUBLIC_TENANT_ID = 'public';

/** The shape of a tenant ERN, as messages and hints name it. */
export const TENANT_ERN_SHAPE = 'ern:<product>/tenants/<tenant-id>';

/** The shapes of a user reference, as messages and hints name them (see {@link UserReference}). */
export const USER_REFERENCE_SHAPES: readonly string[] = Object.freeze([
  'ern:<product>/tenants/<tenant-id>/users/<user-id>',
  'ern:<product>/tenants/users/<user-id>',
  '//users/<user-id>',
  'ern:<product>/tenants/public',
]);

/** Longest product, tenant id, user id or resource id accepted. */
export const MAX_NAME_PART_LENGTH = 256;

/** The one alphabet of every name part: a product, a tenant id, a user id, a resource id. */
const NAME_PART = /^[A-Za-z0-9._-]+$/;

/** `true` for a name part: 1 to {@link MAX_NAME_PART_LENGTH} letters, digits, `-`, `_` or `.`. */
export function isNamePart(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_NAME_PART_LENGTH && NAME_PART.test(value);
}
/** 1 at the ASCII codes {@link NAME_PART} allows (a loop over a table costs less than a match). */
const NAME_PART_CHARS = Uint8Array.from({ length: 128 }, (_, code) => (NAME_PART.test(String.fromCharCode(code)) ? 1 : 0));
const PART = `[A-Za-z0-9._-]{1,${MAX_NAME_PART_LENGTH}}`;

/** One name part, as a regular expression's source (not anchored), for schemas. */
export const NAME_PART_PATTERN = PART;
/**
 * The valid names in one match each: the parsers try these first, and only a name that fails them
 * is taken apart part by part, to say which part is wrong.
 */
const TENANT = new RegExp(`^ern:(${PART})/tenants/(${PART})$`);
/** Groups: product; tenant id (tenant, tenant user); user id (tenant user); user id (product user). */
const ABSOLUTE = new RegExp(`^ern:(${PART})/tenants/(?:(${PART})(?:/users/(${PART}))?|users/(${PART}))$`);
const RELATIVE = new RegExp(`^//(departments|customers|users)/(${PART})$`);
const ERN_PREFIX = 'ern:';
const RELATIVE_PREFIX = '//';

/** What an {@link ErnError} found wrong. */
export type ErnErrorReason = 'not_a_string' | 'prefix' | 'shape' | 'product' | 'tenant_id' | 'user_id' | 'collection' | 'id' | 'not_public';

/** Which kind of name was being parsed. */
export type ErnKind = 'tenant ERN' | 'ERN' | 'user reference' | 'relative reference';

/** A resource name that does not parse. `reason` names the part at fault. */
export class ErnError extends TypeError {
  override readonly name = 'ErnError';
  readonly code = 'invalid_ern' as const;
  readonly reason: ErnErrorReason;
  readonly kind: ErnKind;

  constructor(kind: ErnKind, reason: ErnErrorReason, detail: string) {
    super(`Invalid ${kind}: ${detail}`);
    this.kind = kind;
    this.reason = reason;
  }
}

/** A tenant, as named by `ern:<product>/tenants/<id>`. */
export interface TenantErn {
  readonly ern: string;
  readonly product: string;
  readonly id: string;
  /** `true` for the public tenant (a product acting as itself). */
  readonly isPublic: boolean;
}

/** The collections a relative reference may name. */
export type ReferenceCollection = 'departments' | 'customers' | 'users';

/** A relative reference such as `//departments/d-1`. */
export interface RelativeReference {
  readonly ref: string;
  readonly collection: ReferenceCollection;
  readonly id: string;
}

/**
 * A user reference, in one of its four forms:
 * - `tenant_user`: `ern:<product>/tenants/<tenant-id>/users/<user-id>`
 * - `product_user`: `ern:<product>/tenants/users/<user-id>`
 * - `relative`: `//users/<user-id>`
 * - `system`: the public tenant's ERN, for a system actor
 */
export type UserReference =
  | {
      readonly form: 'tenant_user';
      readonly ern: string;
      readonly product: string;
      readonly tenantId: string;
      readonly userId: string;
    }
  | {
      readonly form: 'product_user';
      readonly ern: string;
      readonly product: string;
      readonly tenantId: null;
      readonly userId: string;
    }
  | {
      readonly form: 'relative';
      readonly ern: string;
      readonly product: null;
      readonly tenantId: null;
      readonly userId: string;
    }
  | {
      readonly form: 'system';
      readonly ern: string;
      readonly product: string;
      readonly tenantId: string;
      readonly userId: null;
    };

/** A {@link UserReference} without its text, as {@link formatUserReference} takes it. */
export type UserReferenceParts = UserReference extends infer U ? (U extends unknown ? Omit<U, 'ern'> : never) : never;

/** Any absolute ERN: a tenant or a user. */
export type Ern = ({ readonly type: 'tenant' } & TenantErn) | ({ readonly type: 'user' } & UserReference);

const COLLECTIONS: ReadonlySet<string> = new Set<ReferenceCollection>(['departments', 'customers', 'users']);

function checkPart(kind: ErnKind, reason: ErnErrorReason, label: string, value: string | undefined): string {
  if (value === undefined || value === '') {
    throw new ErnError(kind, reason, `the ${label} is empty`);
  }
  if (value.length > MAX_NAME_PART_LENGTH) {
    throw new ErnError(kind, reason, `the ${label} is longer than ${MAX_NAME_PART_LENGTH} characters`);
  }
  if (!NAME_PART.test(value)) {
    throw new ErnError(kind, reason, `the ${label} ${quote(value)} may hold only letters, digits, "-", "_" and "."`);
  }
  return value;
}

function requireString(kind: ErnKind, value: unknown): string {
  if (typeof value !== 'string') {
    throw new ErnError(kind, 'not_a_string', `expected a string, got ${value === null ? 'null' : typeof value}`);
  }
  return value;
}

/** Splits `ern:<product>/tenants/…` into its parts after the prefix, checking prefix and product. */
function splitAbsolute(kind: ErnKind, value: string): { product: string; rest: string[] } {
  if (!value.startsWith(ERN_PREFIX)) {
    throw new ErnError(kind, 'prefix', `${quote(value)} does not start with "ern:"`);
  }
  const parts = value.slice(ERN_PREFIX.length).split('/');
  const product = checkPart(kind, 'product', 'product', parts[0]);
  if (parts[1] !== 'tenants') {
    throw new ErnError(kind, 'shape', `${quote(value)} is not of the form "ern:<product>/tenants/…"`);
  }
  return { product, rest: parts.slice(2) };
}

/** @param ern the name as given, when it is exactly `ern:<product>/tenants/<id>` */
function tenant(product: string, id: string, ern = `${ERN_PREFIX}${product}/tenants/${id}`): TenantErn {
  return Object.freeze({ ern, product, id, isPublic: id === PUBLIC_TENANT_ID });
}

/**
 * Parses a tenant ERN, `ern:<product>/tenants/<tenant-id>`.
 * @throws {ErnError} naming the part at fault.
 */
export function parseTenantErn(value: unknown): TenantErn {
  const match = typeof value === 'string' ? TENANT.exec(value) : null;
  if (match !== null) return tenant(match[1] as string, match[2] as string, value as string);
  const kind: ErnKind = 'tenant ERN';
  const text = requireString(kind, value);
  const { product, rest } = splitAbsolute(kind, text);
  if (rest.length !== 1) {
    throw new ErnError(kind, 'shape', `${quote(text)} is not of the form "${TENANT_ERN_SHAPE}"`);
  }
  return tenant(product, checkPart(kind, 'tenant_id', 'tenant id', rest[0]));
}

/** The user forms of an absolute ERN that matched {@link ABSOLUTE}, or `null` for a tenant ERN. */
function userOf(text: string, match: RegExpExecArray): Extract<UserReference, { form: 'tenant_user' | 'product_user' }> | null {
  const product = match[1] as string;
  if (match[4] !== undefined) return { form: 'product_user', ern: text, product, tenantId: null, userId: match[4] };
  if (match[3] !== undefined) return { form: 'tenant_user', ern: text, product, tenantId: match[2] as string, userId: match[3] };
  return null;
}

/** Parses the absolute forms shared by {@link parseErn} and {@link parseUserReference}. */
function parseAbsolute(kind: ErnKind, text: string): Ern {
  const match = ABSOLUTE.exec(text);
  if (match !== null) {
    const user = userOf(text, match);
    return Object.freeze(user === null ? { type: 'tenant', ...tenant(match[1] as string, match[2] as string) } : { type: 'user', ...user });
  }
  const { product, rest } = splitAbsolute(kind, text);
  if (rest.length === 1) {
    const id = checkPart(kind, 'tenant_id', 'tenant id', rest[0]);
    return Object.freeze({ type: 'tenant', ...tenant(product, id) });
  }
  if (rest.length === 2 && rest[0] === 'users') {
    const userId = checkPart(kind, 'user_id', 'user id', rest[1]);
    return Object.freeze({ type: 'user', form: 'product_user', ern: text, product, tenantId: null, userId });
  }
  if (rest.length === 3 && rest[1] === 'users') {
    const tenantId = checkPart(kind, 'tenant_id', 'tenant id', rest[0]);
    const userId = checkPart(kind, 'user_id', 'user id', rest[2]);
    return Object.freeze({ type: 'user', form: 'tenant_user', ern: text, product, tenantId, userId });
  }
  throw new ErnError(kind, 'shape', `${quote(text)} names neither a tenant nor a user`);
}

/**
 * Parses any absolute ERN: a tenant (`type: 'tenant'`) or a user (`type: 'user'`, forms
 * `tenant_user` and `product_user`).
 * @throws {ErnError} naming the part at fault.
 */
export function parseErn(value: unknown): Ern {
  const kind: ErnKind = 'ERN';
  return parseAbsolute(kind, requireString(kind, value));
}

/**
 * Parses a relative reference `//<collection>/<id>`. With `collection`, any other collection is
 * an error.
 * @throws {ErnError} naming the part at fault.
 */
export function parseReference(value: unknown, collection?: ReferenceCollection): RelativeReference {
  const match = typeof value === 'string' ? RELATIVE.exec(value) : null;
  if (match !== null && (collection === undefined || match[1] === collection)) {
    return Object.freeze({ ref: value as string, collection: match[1] as ReferenceCollection, id: match[2] as string });
  }
  const kind: ErnKind = 'relative reference';
  const text = requireString(kind, value);
  if (!text.startsWith(RELATIVE_PREFIX)) {
    throw new ErnError(kind, 'prefix', `${quote(text)} does not start with "//"`);
  }
  const parts = text.slice(RELATIVE_PREFIX.length).split('/');
  if (parts.length !== 2) {
    throw new ErnError(kind, 'shape', `${quote(text)} is not of the form "//<collection>/<id>"`);
  }
  const [name = '', id] = parts;
  if (!COLLECTIONS.has(name)) {
    throw new ErnError(kind, 'collection', `${quote(name)} is not one of departments, customers, users`);
  }
  if (collection !== undefined && name !== collection) {
    throw new ErnError(kind, 'collection', `expected "//${collection}/<id>", got a reference to ${name}`);
  }
  return Object.freeze({ ref: text, collection: name as ReferenceCollection, id: checkPart(kind, 'id', 'id', id) });
}

const USERS_SEGMENT = '/users/';

/**
 * `text` as a user of `tenant` (`<tenant ERN>/users/<user-id>`), or `undefined` when it is not one
 * (it may still be another form: {@link parseUserReference} decides). The claim rules' fast path:
 * a token's `user_ern` usually names a user of its own tenant, and checking the user id alone
 * costs a fraction of matching the whole name.
 */
export function tenantUserOf(text: string, tenant: TenantErn): UserReference | undefined {
  const start = tenant.ern.length + USERS_SEGMENT.length;
  if (text.length <= start || text.length - start > MAX_NAME_PART_LENGTH) return undefined;
  // Two `startsWith`, written as `lastIndexOf` from a position, which looks there only: V8 compares
  // memory for it, and character by character for `startsWith`.
  if (text.lastIndexOf(tenant.ern, 0) !== 0 || text.lastIndexOf(USERS_SEGMENT, tenant.ern.length) !== tenant.ern.length) return undefined;
  for (let index = start; index < text.length; index += 1) {
    if (NAME_PART_CHARS[text.charCodeAt(index)] !== 1) return undefined;
  }
  return Object.freeze({
    form: 'tenant_user',
    ern: text,
    product: tenant.product,
    tenantId: tenant.id,
    userId: text.slice(start),
  });
}

/**
 * Parses a user reference in any of its forms (see {@link UserReference}). A tenant ERN is accepted
 * only for the public tenant, as a system actor.
 * @throws {ErnError} naming the part at fault.
 */
export function parseUserReference(value: unknown): UserReference {
  const kind: ErnKind = 'user reference';
  const text = requireString(kind, value);
  const match = ABSOLUTE.exec(text);
  if (match !== null) {
    const user = userOf(text, match);
    if (user !== null) return Object.freeze(user);
  }
  if (text.startsWith(RELATIVE_PREFIX)) {
    const ref = parseReference(text, 'users');
    return Object.freeze({ form: 'relative', ern: text, product: null, tenantId: null, userId: ref.id });
  }
  const parsed = parseAbsolute(kind, text);
  if (parsed.type === 'user') {
    const { type: _type, ...user } = parsed;
    return Object.freeze(user as UserReference);
  }
  if (!parsed.isPublic) {
    throw new ErnError(kind, 'not_public', 'a tenant ERN names a system actor only for the public tenant');
  }
  return Object.freeze({ form: 'system', ern: parsed.ern, product: parsed.product, tenantId: parsed.id, userId: null });
}

/**
 * Formats a tenant ERN; the inverse of {@link parseTenantErn}.
 * @throws {ErnError} when a part is not a valid name.
 */
export function formatTenantErn(tenantRef: { readonly product: string; readonly id: string }): string {
  const kind: ErnKind = 'tenant ERN';
  const product = checkPart(kind, 'product', 'product', tenantRef.product);
  return tenant(product, checkPart(kind, 'tenant_id', 'tenant id', tenantRef.id)).ern;
}

/**
 * Formats a relative reference; the inverse of {@link parseReference}.
 * @throws {ErnError} when the collection or id is not valid.
 */
export function formatReference(reference: { readonly collection: ReferenceCollection; readonly id: string }): string {
  const kind: ErnKind = 'relative reference';
  if (!COLLECTIONS.has(reference.collection)) {
    throw new ErnError(kind, 'collection', `${quote(String(reference.collection))} is not one of departments, customers, users`);
  }
  return `${RELATIVE_PREFIX}${reference.collection}/${checkPart(kind, 'id', 'id', reference.id)}`;
}

/**
 * Formats a user reference from its parts; the inverse of {@link parseUserReference}.
 * @throws {ErnError} when a part is not a valid name.
 */
export function formatUserReference(user: UserReferenceParts): string {
  const kind: ErnKind = 'user reference';
  switch (user.form) {
    case 'relative':
      return formatReference({ collection: 'users', id: user.userId });
    case 'system':
      return formatTenantErn({ product: user.product, id: PUBLIC_TENANT_ID });
    case 'product_user':
      return `${ERN_PREFIX}${checkPart(kind, 'product', 'product', user.product)}/tenants/users/${checkPart(kind, 'user_id', 'user id', user.userId)}`;
    case 'tenant_user':
      return `${formatTenantErn({ product: user.product, id: user.tenantId })}/users/${checkPart(kind, 'user_id', 'user id', user.userId)}`;
    default:
      throw new ErnError(kind, 'shape', `unknown user reference form ${quote(String((user as { form: unknown }).form))}`);
  }
}
