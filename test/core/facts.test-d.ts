/**
 * The facts of a failure are typed per code (and, within `invalid_claim` and `unknown_key`, per
 * rule and shape): narrowing on `code` gives the shape the verifier writes, so a reader needs no
 * cast and a writer cannot record another shape.
 */
import { describe, expectTypeOf, it } from 'vitest';
import {
  AuthError,
  type ClockFacts,
  type ErnErrorReason,
  type FactCode,
  type FailureFacts,
  type FormatProblem,
  type IgnoredKey,
  type PassedFacts,
  type RuleName,
  type RuleOutcome,
  type VerifierEvent,
} from '../../src/index.js';

declare const facts: FailureFacts;
declare const outcome: RuleOutcome;
declare const event: VerifierEvent;

describe('FailureFacts', () => {
  it('narrows by code to the rule and the values that code compares', () => {
    switch (facts.code) {
      case 'token_expired':
        expectTypeOf(facts.rule).toEqualTypeOf<'expiry'>();
        expectTypeOf(facts.claim).toEqualTypeOf<'exp' | 'expt'>();
        expectTypeOf(facts.expected).toEqualTypeOf<ClockFacts>();
        expectTypeOf(facts.actual).toEqualTypeOf<number>();
        break;
      case 'unknown_issuer':
        expectTypeOf(facts.expected).toEqualTypeOf<readonly string[]>();
        expectTypeOf(facts.actual).toEqualTypeOf<string>();
        break;
      case 'malformed_token':
        expectTypeOf(facts.actual).toEqualTypeOf<FormatProblem>();
        break;
      case 'token_lifetime_exceeded':
        expectTypeOf(facts.expected.maximum).toEqualTypeOf<number>();
        expectTypeOf(facts.actual.startClaim).toEqualTypeOf<'iat' | 'nbf'>();
        break;
      case 'insufficient_scope':
        expectTypeOf(facts.expected.mode).toEqualTypeOf<'allOf' | 'anyOf'>();
        expectTypeOf(facts.actual).toEqualTypeOf<readonly string[]>();
        break;
      case 'unknown_key':
        // The kid is not held (with why its entries were ignored), or is held for another alg.
        if ('alg' in facts.expected) expectTypeOf(facts.expected.alg).toEqualTypeOf<string>();
        else expectTypeOf(facts.expected.ignored).toEqualTypeOf<readonly IgnoredKey[]>();
        break;
      default:
        break;
    }
  });

  it('narrows invalid_claim by rule: a resource name names the part at fault', () => {
    if (facts.code !== 'invalid_claim') return;
    if (facts.rule === 'tenant_ern') {
      expectTypeOf(facts.part).toEqualTypeOf<ErnErrorReason | undefined>();
      expectTypeOf(facts.expected.shapes).toEqualTypeOf<readonly string[]>();
    } else if (facts.rule === 'expiry') {
      expectTypeOf(facts.expected).toEqualTypeOf<readonly ['expt', 'exp']>();
    } else if (facts.rule === 'exp') {
      expectTypeOf(facts.expected).toEqualTypeOf<'numeric_date' | 'string' | 'string_or_strings' | 'scope_list'>();
    }
  });

  it('names one code with a parameter', () => {
    expectTypeOf<FailureFacts<'audience_mismatch'>['expected']>().toEqualTypeOf<readonly string[]>();
    expectTypeOf<FailureFacts<'audience_mismatch'>['code']>().toEqualTypeOf<'audience_mismatch'>();
  });

  it('reaches verify_failure events narrowed the same way', () => {
    if (event.type !== 'verify_failure' || event.facts?.code !== 'subject_mismatch') return;
    expectTypeOf(event.facts.expected).toEqualTypeOf<string | null>();
  });

  it('uses only rule names the verifier has', () => {
    expectTypeOf<FailureFacts['rule']>().toExtend<RuleName>();
    expectTypeOf<PassedFacts['rule']>().toExtend<RuleName>();
    expectTypeOf<FactCode>().toExtend<AuthError['code']>();
  });
});

describe('AuthError', () => {
  it('takes only the facts of its code', () => {
    const expired = { rule: 'expiry', claim: 'exp', expected: { now: 1, tolerance: 0 }, actual: 0 } as const;
    const audience = { rule: 'aud', claim: 'aud', expected: [], actual: 'x' } as const;
    const coded = { ...audience, code: 'audience_mismatch' } as const;
    new AuthError('token_expired', 'Expired.', { facts: expired });
    // @ts-expect-error the facts of audience_mismatch on token_expired
    new AuthError('token_expired', 'Expired.', { facts: audience });
    // @ts-expect-error a code in the facts other than the error's
    new AuthError('token_expired', 'Expired.', { facts: coded });
    // @ts-expect-error missing_token carries no facts
    new AuthError('missing_token', 'No token.', { facts: expired });
  });

  it('types its facts by its code when the code is known', () => {
    const error = new AuthError('token_not_yet_valid', 'Not yet.');
    expectTypeOf(error.facts).toEqualTypeOf<FailureFacts<'token_not_yet_valid'> | undefined>();
  });
});

describe('RuleOutcome', () => {
  it('narrows a passed outcome by rule, a failed one by code', () => {
    if (outcome.passed) {
      if (outcome.rule === 'key') expectTypeOf(outcome.expected.bits).toEqualTypeOf<number>();
      if (outcome.rule === 'size') expectTypeOf(outcome.actual.length).toEqualTypeOf<number>();
    } else if (outcome.code === 'audience_mismatch') {
      expectTypeOf(outcome.expected).toEqualTypeOf<readonly string[]>();
    }
  });
});
