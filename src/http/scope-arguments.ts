/**
 * The arguments of every adapter's `requireScopes(...)`.
 */
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
  if (args.length === 0) throw new TypeError('requireScopes: give at least one scope');
  return stableRequirement(args.length === 1 ? args[0] : args, 'requireScopes');
}
