/**
 * The canonical JSON behind an `Idempotency-Key`'s body fingerprint, as properties: it is the body
 * itself (it parses back to an equal value), it does not depend on member order or whitespace, it
 * is what a plain recursive definition gives, and no nesting depth makes it throw.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { DEFAULT_MAX_BODY_BYTES, canonicalJson } from '../../src/payment-links/index.js';

/** The definition: members sorted by name at every depth, everything else as JSON.stringify writes it. */
function reference(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const names = Object.keys(value).sort();
    return `{${names.map((name) => `${JSON.stringify(name)}:${reference((value as Record<string, unknown>)[name])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** `value` with the members of every object in reverse order. */
function reordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reordered);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value)
        .reverse()
        .map(([name, member]) => [name, reordered(member)]),
    );
  }
  return value;
}

const json = fc.jsonValue({ maxDepth: 5 });

describe('canonicalJson', () => {
  test('is the definition: members sorted by name at every depth', () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(canonicalJson(value)).toBe(reference(value));
      }),
      { numRuns: 300 },
    );
  });

  test('parses back to a value equal to the body', () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 300 },
    );
  });

  test('does not depend on the order of members or on whitespace', () => {
    fc.assert(
      fc.property(json, (value) => {
        const sent = JSON.parse(JSON.stringify(reordered(value), null, 2)) as unknown;
        expect(canonicalJson(sent)).toBe(canonicalJson(value));
      }),
      { numRuns: 300 },
    );
  });

  test('writes a value nested as deep as a body can hold without throwing', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: DEFAULT_MAX_BODY_BYTES / 2 }), fc.constantFrom('[', '{"a":'), (depth, shape) => {
        const close = shape === '[' ? ']' : '}';
        const text = `${shape.repeat(depth)}0${close.repeat(depth)}`;
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
      { numRuns: 30 },
    );
  });
});
