/**
 * Narrowing a caught value to an `AuthError`, as a consumer's `catch` does, gives its code union,
 * never `any`: `switch (error.code)` is then checked for exhaustiveness.
 */
import { expectTypeOf, test } from 'vitest';
import { AuthError, type AuthErrorCode, type FailureFacts, isAuthError } from '../../src/index.js';

declare const caught: unknown;

test('instanceof AuthError narrows an unknown to AuthError<AuthErrorCode>, its code the union', () => {
  if (caught instanceof AuthError) {
    expectTypeOf(caught.code).toEqualTypeOf<AuthErrorCode>();
    expectTypeOf(caught.facts).toEqualTypeOf<FailureFacts | undefined>();
  }
});

test('isAuthError narrows the same way', () => {
  if (isAuthError(caught)) expectTypeOf(caught.code).toEqualTypeOf<AuthErrorCode>();
});

test("a caught AuthError's code is checked against the union: one outside it is refused", () => {
  if (!(caught instanceof AuthError)) return;
  // @ts-expect-error a code outside the union is refused: the code is not `any`
  const wrong: 'no_such_code' = caught.code;
  expectTypeOf(wrong).toEqualTypeOf<'no_such_code'>();
});
