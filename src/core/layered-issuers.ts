/**
 * The issuers of a registry derived from another (`deriveRegistry`): the map of a registry built
 * whole, shared and never changed, and the changes made on top of it since. Deriving copies the
 * changes, not the map, so a change of one issuer costs about the square root of the registry's
 * size (the changes are folded into a new map once they outgrow it), where a copy of the map
 * would cost its size: at 10,000 issuers followed by 16 instances, the copies were most of a
 * change's CPU. The order of registration is kept as a map's would be: an issuer replaced keeps
 * its place, one added (or removed and added again) goes last.
 */
import type { RegisteredIssuer } from './registry.js';

/** One issuer changed on top of the shared map: `undefined` when removed; `last` when it goes after the map's. */
interface Layered {
  readonly registered: RegisteredIssuer | undefined;
  readonly last: boolean;
}

const NO_CHANGES: ReadonlyMap<string, Layered> = new Map();

export class LayeredIssuers {
  readonly #base: ReadonlyMap<string, RegisteredIssuer>;
  readonly #changes: ReadonlyMap<string, Layered>;
  /** How many issuers it holds. */
  readonly size: number;
  #ordered: readonly RegisteredIssuer[] | undefined;

  /** The issuers of `base` (by `iss`, in registration order), none changed. */
  constructor(base: ReadonlyMap<string, RegisteredIssuer>, changes: ReadonlyMap<string, Layered> = NO_CHANGES, size = base.size) {
    this.#base = base;
    this.#changes = changes;
    this.size = size;
  }

  get(issuer: string): RegisteredIssuer | undefined {
    const changed = this.#changes.get(issuer);
    return changed === undefined ? this.#base.get(issuer) : changed.registered;
  }

  /** Every issuer, in registration order (worked out once). */
  ordered(): readonly RegisteredIssuer[] {
    if (this.#ordered !== undefined) return this.#ordered;
    const ordered: RegisteredIssuer[] = [];
    for (const [issuer, registered] of this.#base) {
      const changed = this.#changes.get(issuer);
      if (changed === undefined) ordered.push(registered);
      else if (changed.registered !== undefined && !changed.last) ordered.push(changed.registered);
    }
    for (const changed of this.#changes.values()) if (changed.registered !== undefined && changed.last) ordered.push(changed.registered);
    this.#ordered = ordered;
    return ordered;
  }

  /** These issuers with `removals` taken out, then `upserts` put in (each replacing the one of its `iss`). */
  with(upserts: Iterable<RegisteredIssuer>, removals: Iterable<string>): LayeredIssuers {
    const changes = new Map(this.#changes);
    let size = this.size;
    for (const issuer of removals) {
      if (this.#held(changes, issuer) === undefined) continue;
      size -= 1;
      if (this.#base.has(issuer)) changes.set(issuer, { registered: undefined, last: false });
      else changes.delete(issuer);
    }
    for (const registered of upserts) {
      const issuer = registered.issuer;
      const changed = changes.get(issuer);
      if (this.#held(changes, issuer) === undefined) {
        size += 1;
        // Added (or added again): last, as a map puts a new key.
        changes.delete(issuer);
        changes.set(issuer, { registered, last: true });
      } else {
        changes.set(issuer, { registered, last: changed?.last ?? false });
      }
    }
    if (changes.size * changes.size <= this.#base.size + 256) return new LayeredIssuers(this.#base, changes, size);
    const folded = new LayeredIssuers(this.#base, changes, size).ordered();
    return new LayeredIssuers(new Map(folded.map((registered) => [registered.issuer, registered])));
  }

  #held(changes: ReadonlyMap<string, Layered>, issuer: string): RegisteredIssuer | undefined {
    const changed = changes.get(issuer);
    return changed === undefined ? this.#base.get(issuer) : changed.registered;
  }
}
