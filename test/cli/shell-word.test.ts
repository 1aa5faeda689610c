import { describe, expect, it } from 'vitest';
import { shellWord } from '../../src/cli/shell-word.js';

describe('shellWord', () => {
  it('keeps a plain issuer as it is', () => {
    expect(shellWord('https://auth.acme.example')).toBe('https://auth.acme.example');
  });

  it('keeps an issuer longer than a quoted value whole', () => {
    const issuer = `https://auth.acme.example/${'t'.repeat(200)}`;
    expect(shellWord(issuer)).toBe(issuer);
  });

  it('puts text a shell reads ($, quotes) in single quotes', () => {
    expect(shellWord("https://a.example/$x'y")).toBe(`'https://a.example/$x'\\''y'`);
  });
});
