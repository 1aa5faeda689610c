/**
 * Refusals of the core and testing APIs name the value they found (`got …`), quoted as
 * the package quotes values, so a misuse is fixed from the message alone.
 */
import { describe, expect, it } from 'vitest';
import { IssuerRegistry } from '../../src/index.js';
import { createTestVerifier } from '../../src/testing/index.js';

describe('refusals name the value found', () => {
  it('IssuerRegistry names entries that are not a list', () => {
    expect(() => new IssuerRegistry('https://auth.acme.example' as never)).toThrow(/entries must be .*got "https:\/\/auth\.acme\.example"/);
  });

  it('IssuerRegistry says it got no entry, and how to allow that', () => {
    expect(() => new IssuerRegistry([])).toThrow(/got none: .*allowEmpty/);
  });

  it('createTestVerifier says it got no issuer', async () => {
    await expect(Promise.resolve().then(() => createTestVerifier([]))).rejects.toThrow(/got an empty array/);
  });
});
