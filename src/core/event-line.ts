/**
 * A verifier event as one log line, for a listener that logs: the event's type, then its facts
 * as `name=value` pairs. Every text an event may carry from a token, a JWKS or a table (issuers,
 * kids, the hint) is cut and escaped as hints quote them (hint-text.ts), so a hostile value can
 * neither forge a second line nor make the line long.
 */
import type { VerifierEvent } from './events.js';
import type { IgnoredKey } from './jwk.js';
import { MAX_QUOTED_CHARS, capHint, cut, isoSeconds, quote, quoteList } from './hint-text.js';

/**
 * A JWKS entry left out, as one quoted value: its `kid` (when it has one) and the rule it broke.
 * The kid is the JWKS's text, of any length: cut first, so that the rule is never cut off.
 */
function ignoredText(key: IgnoredKey): string {
  if (key.kid === undefined) return quote(key.reason);
  return quote(`${cut(key.kid, Math.max(MIN_KID_SHOWN, MAX_QUOTED_CHARS - key.reason.length - 3))}: ${key.reason}`);
}

/** The fewest characters of a kid shown beside a long rule. */
const MIN_KID_SHOWN = 16;

/** The facts of `event` worth a log line, each already safe. */
function facts(event: VerifierEvent): readonly (readonly [string, string | number | boolean | null])[] {
  switch (event.type) {
    case 'key_used_early':
    case 'key_rotation_overdue':
    case 'key_withdrawn':
      return [
        ['issuer', quote(event.issuer)],
        ['kid', quote(event.kid)],
        ['first_seen', isoSeconds(Math.floor(event.key.firstSeen / 1000))],
      ];
    case 'registry_changed':
      return [
        ['added', quoteList(event.added)],
        ['updated', quoteList(event.updated)],
        ['removed', quoteList(event.removed)],
        ['issuers', event.issuers],
      ];
    case 'issuer_suspended':
    case 'issuer_resumed':
      return [['issuer', quote(event.issuer)]];
    case 'keys_removed':
      return [
        ['issuer', quote(event.issuer)],
        ['kids', quoteList(event.kids)],
        ['cause', event.cause],
      ];
    case 'jwks_fetch':
      return [
        ['issuer', quote(event.issuer)],
        ['trigger', event.trigger],
        ['outcome', event.outcome],
        ['reason', event.reason ?? null],
        ['status', event.status ?? null],
        ['host', event.address === undefined ? null : quote(event.address.host)],
        ['address', event.address === undefined ? null : quote(event.address.address)],
        ['rule', event.address?.rule ?? null],
        ['range', event.address === undefined ? null : quote(event.address.range)],
        ['keys', event.keys ?? null],
        ['ignored_keys', event.ignoredKeys ? event.ignoredKeys : null],
        ['first_ignored', event.ignored?.[0] === undefined ? null : ignoredText(event.ignored[0])],
        ['ms', Math.round(event.durationMs)],
      ];
    case 'verify_failure':
      return [
        ['code', event.code],
        ['issuer', event.issuer === null ? null : quote(event.issuer)],
      ];
    case 'verify_success':
      return [
        ['issuer', quote(event.issuer)],
        ['kid', quote(event.kid)],
        ['cached', event.cached],
      ];
    case 'cache':
      return [['outcome', event.outcome]];
  }
}

/**
 * `event` as one line, safe to log: `key_withdrawn issuer="https://auth.acme.example" kid="k1"
 * first_seen=2030-01-01T00:00:00Z`. Facts the event lacks are left out; a failure's hint, capped
 * and escaped as every hint is, ends the line after `: `.
 */
export function eventLine(event: VerifierEvent): string {
  const pairs = facts(event)
    .filter(([, value]) => value !== null)
    .map(([name, value]) => `${name}=${value}`);
  const line = [event.type, ...pairs].join(' ');
  return event.type === 'verify_failure' && event.hint !== undefined ? `${line}: ${capHint(event.hint)}` : line;
}
