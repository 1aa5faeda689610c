/**
 * A string-keyed lookup for keys that arrive as fresh strings, one per token (an `iss`, an `aud`,
 * a `tenant_ern`, an encoded header). A `Map` must hash such a key on every look-up; consecutive
 * tokens mostly carry the same values, so the last key found is compared first, which costs a
 * comparison instead of a hash and a probe.
 *
 * @module paygate-auth
 */

/** Bounds of a {@link StringLookup} that remembers values as they are found. */
export interface StringLookupLimits {
  /** Most entries; when full, the next {@link StringLookup.set} starts afresh. */
  readonly maxEntries: number;
  /** Longest key remembered; {@link StringLookup.set} ignores a longer one. */
  readonly maxKeyChars: number;
}

/** A `Map<string, T>` whose last hit is compared before the map is searched. */
export class StringLookup<T> {
  readonly #entries: Map<string, T>;
  readonly #limits: StringLookupLimits | undefined;
  #lastKey: string | undefined;
  #lastValue: T | undefined;

  /**
   * @param entries the initial entries.
   * @param limits bounds for {@link set}; without them the lookup holds what it was given.
   */
  constructor(entries: Iterable<readonly [string, T]> = [], limits?: StringLookupLimits) {
    this.#entries = new Map(entries);
    this.#limits = limits;
  }

  /** The value of exactly `key`, if any. */
  get(key: string): T | undefined {
    if (key === this.#lastKey) return this.#lastValue;
    const value = this.#entries.get(key);
    if (value !== undefined) {
      this.#lastKey = key;
      this.#lastValue = value;
    }
    return value;
  }

  /** Remembers `value` for `key`, within the limits. @throws {TypeError} when the lookup has none. */
  set(key: string, value: T): void {
    const limits = this.#limits;
    if (limits === undefined) throw new TypeError('StringLookup: this lookup holds fixed entries');
    if (key.length > limits.maxKeyChars) return;
    if (this.#entries.size >= limits.maxEntries) this.#entries.clear();
    this.#entries.set(key, value);
    this.#lastKey = key;
    this.#lastValue = value;
  }

  get size(): number {
    return this.#entries.size;
  }
}
