/**
 * The directory: each tenant's departments, stores, shoppers and payment-method settings. Every
 * method names the tenant; nothing of one tenant is reachable through another. A database
 * implements the same interface.
 */
import { describeListFault, describeValue, isNamePart, quote } from '../internal/index.js';
import { parseTenantErn } from '../index.js';
import { isUuid, randomIds } from './ids.js';

/** A department of a tenant. */
export interface Department {
  /** The `<id>` of `//departments/<id>`. */
  readonly ref: string;
  /** Its UUID (the link's `department`). */
  readonly id: string;
  /** The UUID of the store that takes its payments; `null` to use the tenant's default store. */
  readonly storeId: string | null;
}

/** A store of a tenant. */
export interface Store {
  /** UUID (the link's `store`). */
  readonly id: string;
  readonly name: string;
}

/** A shopper of a tenant. */
export interface Shopper {
  /** The `<id>` of `//customers/<id>`. */
  readonly ref: string;
  /** UUID (the link's `shopper`). */
  readonly id: string;
}

/** A tenant's payment-method settings. */
export interface PaymentMethodSettings {
  /** Codes offered on the pay page (`mc`, `visa`, `walley`, `mobilepay`…); duplicates kept as configured. */
  readonly allowed: readonly string[];
  /** Codes never offered; `[]` when none. */
  readonly blocked: readonly string[];
}

/** Lookups the payment-link handler needs. */
export interface Directory {
  /** The department `ref` of `tenant`, or `null`. */
  findDepartment(tenant: string, ref: string): Promise<Department | null>;
  /** The store chosen for `department` of `tenant`, or `null` when the tenant has none. */
  storeFor(tenant: string, department: Department): Promise<Store | null>;
  /**
   * The shopper `ref` of `tenant`; when there is none, registers one with id `newId` and returns
   * it. Atomic: concurrent calls for one `ref` return the same shopper.
   */
  resolveShopper(tenant: string, ref: string, newId: string): Promise<Shopper>;
  /** The tenant's payment-method settings (empty lists for a tenant with none). */
  paymentMethods(tenant: string): Promise<PaymentMethodSettings>;
}

/** A tenant as {@link InMemoryDirectory} is seeded with. */
export interface TenantSeed {
  /** The tenant ERN, `ern:<product>/tenants/<id>`. */
  readonly tenant: string;
  /** Its stores; the first is the default store. @default none */
  readonly stores?: readonly { readonly id: string; readonly name?: string | undefined }[] | undefined;
  /** Its departments. `store` names one of `stores` by id; absent, the default store is used. @default none */
  readonly departments?:
    | readonly { readonly ref: string; readonly id?: string | undefined; readonly store?: string | undefined }[]
    | undefined;
  /** Shoppers known beforehand. @default none */
  readonly shoppers?: readonly { readonly ref: string; readonly id?: string | undefined }[] | undefined;
  /** @default { allowed: [], blocked: [] } */
  readonly paymentMethods?:
    | { readonly allowed?: readonly string[] | undefined; readonly blocked?: readonly string[] | undefined }
    | undefined;
}

interface TenantData {
  readonly departments: Map<string, Department>;
  readonly stores: Map<string, Store>;
  readonly defaultStore: Store | null;
  readonly shoppers: Map<string, Shopper>;
  readonly paymentMethods: PaymentMethodSettings;
}

function seedError(where: string, message: string): TypeError {
  return new TypeError(`InMemoryDirectory: ${where} ${message}`);
}

function checkUuid(value: string | undefined, where: string): string {
  if (value === undefined) return randomIds.uuid();
  if (!isUuid(value)) throw seedError(where, `must be a UUID, got ${quote(value)}`);
  return value.toLowerCase();
}

function checkRef(value: unknown, where: string): string {
  if (!isNamePart(value)) throw seedError(where, `must be 1 to 256 letters, digits, "-", "_" or ".", got ${describeValue(value)}`);
  return value;
}

function checkCodes(value: unknown, where: string): readonly string[] {
  if (value === undefined) return Object.freeze([]);
  if (!Array.isArray(value) || !value.every((code) => typeof code === 'string' && code !== '')) {
    throw seedError(
      where,
      `must be an array of non-empty strings, got ${describeListFault(value, (code) => typeof code === 'string' && code !== '')}`,
    );
  }
  return Object.freeze([...value]);
}

function buildTenant(seed: TenantSeed, where: string): TenantData {
  const stores = new Map<string, Store>();
  (seed.stores ?? []).forEach((store, index) => {
    const id = checkUuid(store.id, `${where}.stores[${index}].id`);
    stores.set(id, Object.freeze({ id, name: store.name ?? `Store ${index + 1}` }));
  });
  const departments = new Map<string, Department>();
  (seed.departments ?? []).forEach((department, index) => {
    const at = `${where}.departments[${index}]`;
    const ref = checkRef(department.ref, `${at}.ref`);
    if (departments.has(ref)) throw seedError(`${at}.ref`, `repeats ${quote(ref)}`);
    const storeId = department.store === undefined ? null : checkUuid(department.store, `${at}.store`);
    if (storeId !== null && !stores.has(storeId))
      throw seedError(`${at}.store`, `names no store of this tenant, got ${quote(storeId)}: seed the store first`);
    departments.set(ref, Object.freeze({ ref, id: checkUuid(department.id, `${at}.id`), storeId }));
  });
  const shoppers = new Map<string, Shopper>();
  (seed.shoppers ?? []).forEach((shopper, index) => {
    const ref = checkRef(shopper.ref, `${where}.shoppers[${index}].ref`);
    shoppers.set(ref, Object.freeze({ ref, id: checkUuid(shopper.id, `${where}.shoppers[${index}].id`) }));
  });
  const paymentMethods = Object.freeze({
    allowed: checkCodes(seed.paymentMethods?.allowed, `${where}.paymentMethods.allowed`),
    blocked: checkCodes(seed.paymentMethods?.blocked, `${where}.paymentMethods.blocked`),
  });
  return { departments, stores, defaultStore: stores.values().next().value ?? null, shoppers, paymentMethods };
}

/**
 * A {@link Directory} in memory, seeded with tenants. Shoppers registered by
 * {@link Directory.resolveShopper} are kept per tenant. Each method completes without yielding,
 * so concurrent registrations of one shopper return the same id.
 */
export class InMemoryDirectory implements Directory {
  readonly #tenants = new Map<string, TenantData>();

  /** @throws {TypeError} naming the seed entry at fault. */
  constructor(tenants: readonly TenantSeed[] = []) {
    if (!Array.isArray(tenants)) throw seedError('tenants', `must be an array of tenant seeds, got ${describeValue(tenants)}`);
    for (const [index, seed] of tenants.entries()) this.addTenant(seed, `tenants[${index}]`);
  }

  /**
   * Adds (or replaces) a tenant.
   * @throws {TypeError} naming the seed entry at fault.
   */
  addTenant(seed: TenantSeed, where = 'tenant'): void {
    let tenant: string;
    try {
      tenant = parseTenantErn(seed.tenant).ern;
    } catch (error) {
      throw seedError(`${where}.tenant`, `is not a tenant ERN: ${(error as Error).message}`);
    }
    this.#tenants.set(tenant, buildTenant(seed, where));
  }

  async findDepartment(tenant: string, ref: string): Promise<Department | null> {
    return this.#tenants.get(tenant)?.departments.get(ref) ?? null;
  }

  async storeFor(tenant: string, department: Department): Promise<Store | null> {
    const data = this.#tenants.get(tenant);
    if (data === undefined) return null;
    if (department.storeId !== null) return data.stores.get(department.storeId) ?? null;
    return data.defaultStore;
  }

  async resolveShopper(tenant: string, ref: string, newId: string): Promise<Shopper> {
    let data = this.#tenants.get(tenant);
    if (data === undefined) {
      data = buildTenant({ tenant }, 'tenant');
      this.#tenants.set(tenant, data);
    }
    const known = data.shoppers.get(ref);
    if (known !== undefined) return known;
    const shopper = Object.freeze({ ref, id: newId });
    data.shoppers.set(ref, shopper);
    return shopper;
  }

  async paymentMethods(tenant: string): Promise<PaymentMethodSettings> {
    return this.#tenants.get(tenant)?.paymentMethods ?? Object.freeze({ allowed: [], blocked: [] });
  }

  /** The shoppers of `tenant` (seeded and registered). */
  shoppers(tenant: string): readonly Shopper[] {
    return [...(this.#tenants.get(tenant)?.shoppers.values() ?? [])];
  }
}
