import { describe, expect, it } from 'vitest';
import { isCorsPreflight } from '../../src/http/preflight.js';

const ORIGIN = 'https://shop.example';

describe('isCorsPreflight', () => {
  it('recognises OPTIONS with Origin and Access-Control-Request-Method in Node headers', () => {
    expect(isCorsPreflight({ method: 'OPTIONS', headers: { origin: ORIGIN, 'access-control-request-method': 'POST' } })).toBe(true);
  });

  it('recognises OPTIONS with Origin and Access-Control-Request-Method in Web Headers', () => {
    const request = new Request('http://127.0.0.1/', {
      method: 'OPTIONS',
      headers: { Origin: ORIGIN, 'Access-Control-Request-Method': 'POST' },
    });
    expect(isCorsPreflight(request)).toBe(true);
  });

  it.each([
    ['a GET with both headers', 'GET', { origin: ORIGIN, 'access-control-request-method': 'POST' }],
    ['an OPTIONS without Origin', 'OPTIONS', { 'access-control-request-method': 'POST' }],
    ['an OPTIONS without Access-Control-Request-Method', 'OPTIONS', { origin: ORIGIN }],
    ['an OPTIONS with an empty Origin', 'OPTIONS', { origin: ' ', 'access-control-request-method': 'POST' }],
    ['an OPTIONS with an empty Access-Control-Request-Method', 'OPTIONS', { origin: ORIGIN, 'access-control-request-method': '' }],
    ['a request without a method', undefined, { origin: ORIGIN, 'access-control-request-method': 'POST' }],
  ])('does not take %s for a preflight', (_name, method, headers) => {
    expect(isCorsPreflight({ method, headers })).toBe(false);
  });

  it('reads a header that arrived as several values', () => {
    expect(isCorsPreflight({ method: 'OPTIONS', headers: { origin: ['', ORIGIN], 'access-control-request-method': 'PUT' } })).toBe(true);
  });

  it('is not fooled by a header named "get" in Node headers', () => {
    expect(
      isCorsPreflight({
        method: 'OPTIONS',
        headers: { get: 'x', origin: ORIGIN, 'access-control-request-method': 'PUT' },
      }),
    ).toBe(true);
  });
});
