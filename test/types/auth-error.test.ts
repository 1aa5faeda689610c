/**
 * `AuthError`'s own `Symbol.hasInstance` (there for the types, auth-error.test-d.ts) answers
 * `instanceof` as any class does.
 */
import { describe, expect, it } from 'vitest';
import { AuthError } from '../../src/index.js';

class RouteError extends AuthError<'insufficient_scope'> {}

describe('instanceof AuthError', () => {
  it('is true for an AuthError and for an instance of a subclass', () => {
    expect(new AuthError('token_expired', 'expired') instanceof AuthError).toBe(true);
    expect(new RouteError('insufficient_scope', 'scope') instanceof AuthError).toBe(true);
  });

  it('is false for another error, a look-alike object and a value that is not an object', () => {
    expect(new Error('x') instanceof AuthError).toBe(false);
    expect({ name: 'AuthError', code: 'token_expired', status: 401 } instanceof AuthError).toBe(false);
    expect((null as unknown) instanceof AuthError).toBe(false);
    expect(('token_expired' as unknown) instanceof AuthError).toBe(false);
  });

  it("a subclass's instanceof sees only its own instances", () => {
    expect(new AuthError('insufficient_scope', 'scope') instanceof RouteError).toBe(false);
    expect(new RouteError('insufficient_scope', 'scope') instanceof RouteError).toBe(true);
  });
});
