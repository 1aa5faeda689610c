/**
 * A `ScopeSet` cannot be changed: its type offers no method that throws, so a change is a compile
 * error rather than a `TypeError` in production.
 */
import { describe, expectTypeOf, it } from 'vitest';
import { type AuthContext, ScopeSet, parseScopes } from '../../src/index.js';

declare const auth: AuthContext;

describe('ScopeSet', () => {
  it('offers no add, delete or clear, which throw at run time', () => {
    const scopes = parseScopes('pay:processPayments');
    // @ts-expect-error a ScopeSet cannot be changed: add throws
    scopes.add('hub:subscribe');
    // @ts-expect-error a ScopeSet cannot be changed: delete throws
    new ScopeSet(['a']).delete('a');
    // @ts-expect-error a ScopeSet cannot be changed: clear throws
    scopes.clear();
  });

  it('reads as a ReadonlySet, as AuthContext.scopes does, with its own toJSON', () => {
    expectTypeOf(parseScopes('a')).toMatchTypeOf<ReadonlySet<string>>();
    expectTypeOf(parseScopes('a').toJSON()).toEqualTypeOf<string[]>();
    expectTypeOf(auth.scopes.has('a')).toEqualTypeOf<boolean>();
    expectTypeOf(new ScopeSet(['a'])).toEqualTypeOf(parseScopes('a'));
  });
});
