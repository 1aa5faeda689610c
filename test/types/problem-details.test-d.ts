/**
 * The `code` of `toErrorResponse(...).body` is the union of what it can be, so that a consumer's
 * `switch (body.code)` is checked for exhaustiveness.
 */
import { expectTypeOf, test } from 'vitest';
import { type AuthErrorCode, type ProblemDetails, toErrorResponse } from '../../src/index.js';

test("a problem's code is an AuthErrorCode, configuration_error or internal_error", () => {
  expectTypeOf<ProblemDetails['code']>().toEqualTypeOf<AuthErrorCode | 'configuration_error' | 'internal_error'>();
});

test('a switch on the code of toErrorResponse(...).body can be exhaustive', () => {
  const { body } = toErrorResponse(new Error('x'));
  const status = (code: ProblemDetails['code']): number => {
    switch (code) {
      case 'configuration_error':
      case 'internal_error':
        return 500;
      default: {
        const auth: AuthErrorCode = code;
        return auth.length;
      }
    }
  };
  expectTypeOf(status(body.code)).toEqualTypeOf<number>();
  // @ts-expect-error a code no response carries is refused
  const wrong: ProblemDetails['code'] = 'no_such_code';
  expectTypeOf(wrong).not.toBeAny();
});
