/** Awaits a promise that must reject with an `AuthError`, and returns the error. */
import { expect } from 'vitest';
import { AuthError } from '../../src/index.js';

/** The `AuthError` `promise` rejects with; fails the test if it resolves or rejects otherwise. */
export async function authRejection(promise: Promise<unknown>): Promise<AuthError> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome, 'expected an AuthError').toBeInstanceOf(AuthError);
  return outcome as AuthError;
}
