import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type KeyHistoryEntry, type VerifierEvent, eventLine } from '../../src/index.js';

const ISSUER = 'https://auth.acme.example';
const HOSTILE = `https://evil.example/\n2030-01-01 verify_success issuer="forged"${'x'.repeat(10_000)}\u202e`;
const KEY = { issuer: ISSUER, kid: 'k1', firstSeen: Date.UTC(2030, 0, 1) } as unknown as KeyHistoryEntry;

describe('eventLine', () => {
  it.each<[string, VerifierEvent, string]>([
    [
      'a key breach',
      { type: 'key_withdrawn', issuer: ISSUER, kid: 'k1', key: KEY },
      `key_withdrawn issuer="${ISSUER}" kid="k1" first_seen=2030-01-01T00:00:00Z`,
    ],
    [
      'a registry change',
      { type: 'registry_changed', added: [ISSUER], updated: [], removed: ['https://old.example'], issuers: 1 },
      `registry_changed added="${ISSUER}" updated=none removed="https://old.example" issuers=1`,
    ],
    [
      'a revocation',
      { type: 'keys_removed', issuer: ISSUER, kids: ['k1'], cause: 'revoked' },
      `keys_removed issuer="${ISSUER}" kids="k1" cause=revoked`,
    ],
    ['a suspension', { type: 'issuer_suspended', issuer: ISSUER }, `issuer_suspended issuer="${ISSUER}"`],
    ['a suspension lifted', { type: 'issuer_resumed', issuer: ISSUER }, `issuer_resumed issuer="${ISSUER}"`],
  ])('writes %s as its type and its facts', (_name, event, line) => {
    expect(eventLine(event)).toBe(line);
  });

  it('writes a failed download with the HTTP status the JWKS endpoint answered', () => {
    const line = eventLine({
      type: 'jwks_fetch',
      issuer: ISSUER,
      trigger: 'max_age',
      outcome: 'error',
      reason: 'status',
      status: 503,
      durationMs: 41.6,
    });
    expect(line).toBe(`jwks_fetch issuer="${ISSUER}" trigger=max_age outcome=error reason=status status=503 ms=42`);
  });

  it('writes a refused address with the host, the address judged, the rule and the range', () => {
    const address = { host: 'jwks.acme.example', address: '10.0.0.7', rule: 'private', range: '10.0.0.0/8' } as const;
    const line = eventLine({
      type: 'jwks_fetch',
      issuer: ISSUER,
      trigger: 'initial',
      outcome: 'error',
      reason: 'address',
      address,
      durationMs: 1,
    });
    expect(line).toContain(' host="jwks.acme.example" address="10.0.0.7" rule=private range="10.0.0.0/8" ');
  });

  it('writes a download that left keys out with their count and the first one, its kid escaped', () => {
    const ignored = [{ kid: 'k\u202eold', reason: 'modulus of 1024 bits, under 2048' }, { reason: 'use is not sig' }];
    const line = eventLine({
      type: 'jwks_fetch',
      issuer: ISSUER,
      trigger: 'initial',
      outcome: 'ok',
      keys: 1,
      ignoredKeys: 2,
      ignored,
      durationMs: 3,
    });
    expect(line).toContain(' keys=1 ignored_keys=2 first_ignored="k\\u202eold: modulus of 1024 bits, under 2048" ');
    expect(line).not.toContain('\u202e');
  });

  it('names the rule an ignored key broke even when its kid is long (the kid is cut, not the rule)', () => {
    const line = eventLine({
      type: 'jwks_fetch',
      issuer: ISSUER,
      trigger: 'initial',
      outcome: 'ok',
      keys: 1,
      ignoredKeys: 1,
      ignored: [{ kid: 'k'.repeat(200), reason: 'modulus of 1024 bits, under 2048' }],
      durationMs: 3,
    });
    expect(line).toMatch(/ first_ignored="k+…: modulus of 1024 bits, under 2048" /);
  });

  it('leaves the ignored keys out of a download that ignored none', () => {
    const line = eventLine({
      type: 'jwks_fetch',
      issuer: ISSUER,
      trigger: 'initial',
      outcome: 'ok',
      keys: 2,
      ignoredKeys: 0,
      durationMs: 3,
    });
    expect(line).toBe(`jwks_fetch issuer="${ISSUER}" trigger=initial outcome=ok keys=2 ms=3`);
  });

  it('ends a failure with its hint', () => {
    const event: VerifierEvent = {
      type: 'verify_failure',
      code: 'insufficient_scope',
      issuer: ISSUER,
      kid: null,
      cached: false,
      durationMs: 0,
      hint: 'granted "hub:subscribe"',
    };
    expect(eventLine(event)).toBe(`verify_failure code=insufficient_scope issuer="${ISSUER}": granted "hub:subscribe"`);
  });

  it('keeps hostile text to one short line: cut, with line breaks and bidirectional controls escaped', () => {
    const line = eventLine({ type: 'keys_removed', issuer: HOSTILE, kids: [HOSTILE], cause: 'jwks' });
    expect(line.split('\n')).toHaveLength(1);
    expect(line).not.toContain('\u202e');
    expect(line).toContain('\\u000a2030-01-01');
    expect(line.length).toBeLessThan(250);
  });

  it('keeps a hostile hint to one line, capped', () => {
    const event: VerifierEvent = {
      type: 'verify_failure',
      code: 'invalid_claim',
      issuer: null,
      kid: null,
      cached: false,
      durationMs: 0,
      hint: HOSTILE.repeat(3),
    };
    const line = eventLine(event);
    expect(line.split('\n')).toHaveLength(1);
    expect(line.length).toBeLessThan(1100);
  });

  it("is how docs/observability.md's recipes log an event's text, never JSON.stringify (bidi and C1 raw, uncut)", () => {
    const page = readFileSync(new URL('../../docs/observability.md', import.meta.url), 'utf8');
    // JSON.stringify leaves U+2028, U+202E and C1 controls raw: a JWKS's kid would reach the log as sent.
    expect(page).not.toMatch(/JSON\.stringify\([^)]*event\./);
    expect(JSON.stringify({ kid: '\u202ek1\u009b' })).toContain('\u202e');
    expect(eventLine({ type: 'key_withdrawn', issuer: ISSUER, kid: '\u202ek1\u009b', key: KEY })).not.toMatch(/[\u202e\u009b]/);
  });
});
