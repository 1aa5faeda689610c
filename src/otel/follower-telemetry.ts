/**
 * How far each PostgreSQL follower of this instance (the issuer registry, the operator controls,
 * the key history, started one by one or by `postgresFollowers`) may be behind its table, from the events and callbacks each one reports
 * through its public options: 0 while it follows; during a stall, the seconds since the last
 * read known good (the registry says when that was), or since the stall began (the controls and
 * the key history report only that). Your own callbacks are still called; where you give none, a
 * stall and its end (and a registry row left out) are logged in one line each, as the followers
 * do by default.
 */
import type { Meter, ObservableGauge, ObservableResult } from '@opentelemetry/api';
import { isAuthError } from '../index.js';
import { capHint, ignoreRejection, quote } from '../internal/index.js';
import type { PostgresFollowersOptions, PostgresRegistryOptions, RegistryEvent } from '../postgres/index.js';
import { ATTRIBUTE_NAMES, METRIC_NAMES } from './names.js';

/** A follower of this instance. */
export type Follower = 'registry' | 'controls' | 'key_history';

/** The callbacks of a follower that reports its stalls to `onError` (the controls, the key history). */
interface StallCallbacks {
  readonly onError?: (error: unknown) => void;
  readonly onRecovered?: () => void;
}

function log(follower: Follower, what: string): void {
  console.error(`paygate-auth/otel: PostgreSQL ${follower.replace('_', ' ')} ${what}`);
}

/** `true` for a callback left out or given as a function: one that is neither the follower refuses. */
const callable = (callback: unknown): boolean => callback === undefined || typeof callback === 'function';

const message = (error: unknown): string => capHint(error instanceof Error ? error.message : String(error));

/** The staleness of each follower wired through it, observed as one gauge. */
export class FollowerTelemetry {
  /** Milliseconds since the epoch each follower is stale since; `null` while it follows. */
  readonly #staleSince = new Map<Follower, number | null>();
  readonly #gauge: ObservableGauge | null;
  readonly #observe = (result: ObservableResult): void => {
    const now = Date.now();
    for (const [follower, since] of this.#staleSince) {
      result.observe(since === null ? 0 : Math.max(0, now - since) / 1000, { [ATTRIBUTE_NAMES.follower]: follower });
    }
  };

  constructor(meter: Meter | null) {
    this.#gauge =
      meter?.createObservableGauge(METRIC_NAMES.staleness, {
        unit: 's',
        description:
          'How far a PostgreSQL follower may be behind its table: 0 while it follows, else the seconds since its data was known current.',
      }) ?? null;
  }

  /** `postgresRegistry` options reporting its staleness, with `options` kept (its `onEvent` still called). */
  registryOptions<T extends PostgresRegistryOptions>(options: T): T {
    const own = options.onEvent;
    // One that is no function is handed on as given, for `postgresRegistry` to refuse it.
    if (!callable(own) || !this.#follow('registry')) return options;
    const onEvent = (event: RegistryEvent): void => {
      if (event.type === 'registry_stale') this.#staleSince.set('registry', event.since);
      else this.#staleSince.set('registry', null);
      if (own !== undefined) ignoreRejection(own(event));
      else if (event.type === 'registry_stale')
        log('registry', `cannot be read (${event.error}); keeping the registry read at ${new Date(event.since).toISOString()} (retrying)`);
      else if (event.type === 'registry_recovered') log('registry', `is read again after ${event.staleForMs} ms`);
      else if (event.type === 'registry_row_refused')
        log(
          'registry',
          `row ${quote(event.row)} is left out (${event.rule}): ${event.reason}; the issuers it names are refused (unknown_issuer) until it is fixed or removed`,
        );
    };
    return { ...options, onEvent };
  }

  /**
   * Options of a follower that reports stalls to `onError` and their end to `onRecovered`. The
   * controls' `onError` also hears of a verifier that refused an action (an `AuthError`, a
   * `TypeError`): no stall of the database, so not counted as one.
   */
  stallOptions<T extends StallCallbacks>(follower: Exclude<Follower, 'registry'>, options: T): T {
    const { onError: ownError, onRecovered: ownRecovered } = options;
    if (!callable(ownError) || !callable(ownRecovered) || !this.#follow(follower)) return options;
    const onError = (error: unknown): void => {
      if (!isAuthError(error) && !(error instanceof TypeError) && (this.#staleSince.get(follower) ?? null) === null) {
        this.#staleSince.set(follower, Date.now());
      }
      if (ownError !== undefined) ignoreRejection(ownError(error));
      else log(follower, `failed: ${message(error)} (retrying)`);
    };
    const onRecovered = (): void => {
      this.#staleSince.set(follower, null);
      if (ownRecovered !== undefined) ignoreRejection(ownRecovered());
      else if (ownError === undefined) log(follower, 'answers again');
    };
    return { ...options, onError, onRecovered };
  }

  /**
   * `postgresFollowers` options reporting the staleness of each follower they start (the
   * registry, the controls, the key history), as the three methods above do for each.
   */
  followersOptions<T extends PostgresFollowersOptions>(options: T): T {
    if (this.#gauge === null) return options;
    const { registry, controls, keyHistory } = options;
    return {
      ...options,
      ...(registry === false ? {} : { registry: this.registryOptions(registry ?? {}) }),
      ...(controls === false ? {} : { controls: this.stallOptions('controls', controls ?? {}) }),
      ...(keyHistory === false ? {} : { keyHistory: this.stallOptions('key_history', keyHistory ?? {}) }),
    };
  }

  /** Stops observing. */
  stop(): void {
    if (this.#gauge !== null && this.#staleSince.size > 0) this.#gauge.removeCallback(this.#observe);
    this.#staleSince.clear();
  }

  /** Starts observing `follower`; `false` when there are no metrics to report it to. */
  #follow(follower: Follower): boolean {
    if (this.#gauge === null) return false;
    if (this.#staleSince.size === 0) this.#gauge.addCallback(this.#observe);
    if (!this.#staleSince.has(follower)) this.#staleSince.set(follower, null);
    return true;
  }
}
