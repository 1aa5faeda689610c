/**
 * A verifier and a test issuer on a frozen clock, with the JWKS served by msw: the common ground
 * of the verifier's specification tests.
 */
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { AUTH_ERROR_CODES, AuthError, type Verifier, type VerifierOptions } from '../../src/index.js';
import { type TestIssuer, type TestIssuerOptions, createTestIssuer, createTestVerifier } from '../../src/testing/index.js';
import { jwksHandlers } from '../../src/testing/msw.js';

/** 2026-01-01T00:00:00Z, in milliseconds. */
export const T0 = Date.UTC(2026, 0, 1);
export const AUDIENCE = 'https://payments.test';

/** A clock the tests move by hand. */
export interface ManualClock {
  (): number;
  set(ms: number): void;
  advance(seconds: number): void;
}

export function manualClock(start = T0): ManualClock {
  let now = start;
  const clock = (() => now) as ManualClock;
  clock.set = (ms) => {
    now = ms;
  };
  clock.advance = (seconds) => {
    now += seconds * 1000;
  };
  return clock;
}

/** Seconds since the epoch on `clock`. */
export const seconds = (clock: () => number): number => Math.floor(clock() / 1000);

export interface Fixture {
  readonly clock: ManualClock;
  readonly issuer: TestIssuer;
  /** Every issuer of the fixture (the first is `issuer`). */
  readonly issuers: readonly TestIssuer[];
  verifier(options?: Omit<VerifierOptions, 'registry' | 'audience'> & { audience?: string | readonly string[] }): Verifier;
}

/**
 * Registers hooks that create the issuers (each serving its JWKS through msw) and reset the clock
 * to {@link T0} before each test; returns accessors usable inside tests.
 */
export function useFixture(...issuerOptions: TestIssuerOptions[]): Fixture {
  const clock = manualClock();
  const issuers: TestIssuer[] = [];
  const server = setupServer();
  beforeAll(async () => {
    const options = issuerOptions.length === 0 ? [{}] : issuerOptions;
    for (const option of options) issuers.push(await createTestIssuer({ audience: AUDIENCE, now: clock, ...option }));
    server.use(...jwksHandlers(...issuers));
    server.listen({ onUnhandledRequest: 'error' });
  });
  beforeEach(() => clock.set(T0));
  afterAll(() => server.close());
  return {
    clock,
    get issuer() {
      return issuers[0] as TestIssuer;
    },
    issuers,
    // The production rules alone (max-age, kid-miss cooldown): these tests specify them.
    verifier: (options = {}) => createTestVerifier(issuers, { now: clock, followIssuers: false, ...options }),
  };
}

/** The AuthError a promise rejects with; fails the test when it resolves or rejects otherwise. */
export async function rejection(promise: Promise<unknown>): Promise<AuthError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AuthError) return error;
    throw new Error(`expected an AuthError, got ${String(error)}`, { cause: error });
  }
  throw new Error('expected an AuthError, but the promise resolved');
}

/** `'ok'` or the AuthError code a verification ends with; any other exception is rethrown. */
export async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    if (!(error instanceof AuthError)) throw error;
    expect(Object.hasOwn(AUTH_ERROR_CODES, error.code)).toBe(true);
    return error.code;
  }
}
