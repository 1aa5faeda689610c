/**
 * The arguments of every adapter's `requireScopes(...)`.
 */
import { describe } from '../core/options.js';
import type { NormalizedScopeRequirement, ScopeRequirement } from '../core/scopes.js';
import { stableRequirement } from './adapter-options.js';

/**
 * What `requireScopes(...)` takes: one requirement (a scope, an array of scopes (all of),
 * `{ allOf }` or `{ anyOf }`), or several scopes, all of which are needed.
 */
export type RequireScopesArguments = readonly [requirement: ScopeRequirement] | readonly [scope: string, ...scopes: string[]];

/**
 * The requirement `requireScopes(...args)` stands for, checked and in a stable shape.
 * @throws {TypeError} naming `requireScopes` when the arguments are not a valid requirement.
 */
export function requirementFromArguments(args: readonly unknown[]): NormalizedScopeRequirement {
  if (args.length === 0) {
    throw new TypeError(
      "requireScopes: give at least one scope, got none: requireScopes('pay:processPayments'); for a route without a scope of its own, leave it out",
    );
  }
  if (args.length > 1) {
    const index = args.findIndex((arg) => typeof arg !== 'string');
    if (index !== -1) {
      // Several arguments that are not all scopes: most likely a request and `next`, the framework
      // calling requireScopes itself (`app.get(path, requireScopes, handler)`).
      throw new TypeError(
        `requireScopes: several arguments must all be scopes, got ${describe(args[index])} at [${index}]: if requireScopes ` +
          "was mounted as middleware itself, call it and mount what it returns: requireScopes('pay:processPayments')",
      );
    }
  }
  return stableRequirement(args.length === 1 ? args[0] : args, 'requireScopes');
}
