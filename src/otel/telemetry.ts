/**
 * The entry point of paygate-auth/otel: one object that builds instrumented verifiers and wires
 * the PostgreSQL followers, reporting to the providers given or the global ones.
 */
import { ignoreRejection, rejectUnknownOptions, optionNames } from '../internal/index.js';
import { type Verifier, type VerifierEventListener, type VerifierOptions, createVerifier } from '../index.js';
import type {
  PostgresControlsOptions,
  PostgresFollowersOptions,
  PostgresKeyHistoryOptions,
  PostgresRegistryOptions,
} from '../postgres/index.js';
import { FollowerTelemetry } from './follower-telemetry.js';
import { type TelemetryOptions, reporters } from './providers.js';
import { VerifierTelemetry } from './verifier-telemetry.js';

/** The members of {@link TelemetryOptions}: any other is refused, naming the nearest. */
const TELEMETRY_OPTION_NAMES = optionNames<TelemetryOptions>({ meterProvider: true, tracerProvider: true });

/** Metrics and traces of paygate-auth, for one set of providers. */
export interface Telemetry {
  /**
   * `true` when there is a meter or a tracer to report to. When `false` (no OpenTelemetry SDK
   * registered, no provider given), every method hands back what it is given, and a verifier
   * costs what it does without this package.
   */
  readonly enabled: boolean;
  /**
   * `createVerifier(options)`, its verifications, JWKS downloads, key removals and key-rule
   * breaches reported (through `onEvent`: yours is still called, after), and the keys it holds
   * observed at each collection.
   * @throws {TypeError} as `createVerifier` does.
   */
  createVerifier(options: VerifierOptions): Verifier;
  /** `postgresRegistry(db, options)` options that report the registry's staleness (your `onEvent` still called). */
  registryOptions<T extends PostgresRegistryOptions>(options?: T): T;
  /** `postgresControls(db, options)` options that report the controls' staleness (your `onError`, `onRecovered` still called). */
  controlsOptions<T extends PostgresControlsOptions>(options?: T): T;
  /** `postgresKeyHistory(db, options)` options that report the key history's staleness (your callbacks still called). */
  keyHistoryOptions<T extends PostgresKeyHistoryOptions>(options?: T): T;
  /**
   * `postgresFollowers(db, options)` options that report the staleness of each follower it starts
   * (the registry, the controls, the key history; your callbacks still called). Without `options`,
   * every follower is started, as by `postgresFollowers(db)`, and typed so.
   */
  followersOptions(): Record<never, never>;
  followersOptions<T extends PostgresFollowersOptions>(options?: T): T;
  /** Stops observing the verifiers' keys and the followers (the counters and spans stop with the verifiers). */
  stop(): void;
}

/**
 * Both listeners, ours first: a listener that throws (yours must not) cannot take our report. One
 * of yours that is no function is handed on as it is, for `createVerifier` to refuse it.
 */
function both(ours: VerifierEventListener, yours: VerifierEventListener | undefined): VerifierEventListener {
  if (yours === undefined) return ours;
  if (typeof yours !== 'function') return yours;
  return (event) => {
    ours(event);
    // Returned to no one: an async listener's rejection is ignored here, as emit() ignores it.
    ignoreRejection(yours(event));
  };
}

/**
 * Telemetry reporting to `options.meterProvider` and `options.tracerProvider`, or to the global
 * providers an OpenTelemetry SDK registered: start the SDK first, as for any instrumentation.
 * @throws {TypeError} naming the option at fault.
 *
 * @example
 * ```ts
 * const telemetry = createTelemetry();
 * const verifier = telemetry.createVerifier({ registry, audience: 'https://payments.example' });
 * const followers = await postgresFollowers(pool, telemetry.followersOptions());
 * ```
 */
export function createTelemetry(options: TelemetryOptions = {}): Telemetry {
  rejectUnknownOptions('createTelemetry', options, TELEMETRY_OPTION_NAMES);
  const { meter, tracer } = reporters(options);
  const enabled = meter !== null || tracer !== null;
  const verifiers = new VerifierTelemetry(meter, tracer);
  const followers = new FollowerTelemetry(meter);
  return Object.freeze({
    enabled,
    createVerifier(verifierOptions: VerifierOptions): Verifier {
      if (!enabled || typeof verifierOptions !== 'object' || verifierOptions === null) return createVerifier(verifierOptions);
      let verifier: Verifier | undefined;
      const listener = verifiers.listener(() => verifier);
      verifier = createVerifier({ ...verifierOptions, onEvent: both(listener, verifierOptions.onEvent) });
      verifiers.watch(verifier);
      return verifier;
    },
    registryOptions<T extends PostgresRegistryOptions>(registryOptions: T = {} as T): T {
      return followers.registryOptions(registryOptions);
    },
    controlsOptions<T extends PostgresControlsOptions>(controlsOptions: T = {} as T): T {
      return followers.stallOptions('controls', controlsOptions);
    },
    keyHistoryOptions<T extends PostgresKeyHistoryOptions>(historyOptions: T = {} as T): T {
      return followers.stallOptions('key_history', historyOptions);
    },
    followersOptions<T extends PostgresFollowersOptions>(followersOptions: T = {} as T): T {
      return followers.followersOptions(followersOptions);
    },
    stop(): void {
      verifiers.stop();
      followers.stop();
    },
  });
}
