import { describe, expect, it } from 'vitest';
import { LINK_CODE_BYTES, isUuid, randomIds, randomLinkCode } from '../../src/payment-links/index.js';

describe('randomLinkCode', () => {
  it(`writes ${LINK_CODE_BYTES} random bytes as 32 base64url characters`, () => {
    expect(randomLinkCode()).toMatch(/^[A-Za-z0-9_-]{32}$/);
  });

  it('never repeats a code across the draws of random bytes it takes many codes from', () => {
    // Several draws' worth: a byte used twice (across or within a draw) would repeat a code.
    const codes = Array.from({ length: 1000 }, randomLinkCode);
    expect(new Set(codes).size).toBe(codes.length);
    const bytes = codes.map((code) => Buffer.from(code, 'base64url'));
    expect(bytes.every((code) => code.length === LINK_CODE_BYTES)).toBe(true);
    expect(new Set(bytes.map((code) => code.subarray(0, 8).toString('hex'))).size).toBe(codes.length);
  });

  it('is the default id generator, beside a random UUID', () => {
    expect(randomIds.linkCode()).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(isUuid(randomIds.uuid())).toBe(true);
  });
});
