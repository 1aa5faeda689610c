/**
 * Loopback hosts: the only hosts a JWKS may be fetched from over plain `http:` (tests and examples).
 * A JWKS download never leaves the origin of its registered URL (see `jwks-fetch.ts`).
 */

const IPV4_LOOPBACK = /^127\.(?:\d{1,3})\.(?:\d{1,3})\.(?:\d{1,3})$/;

/** `true` for `localhost`, `127.0.0.0/8` and `[::1]` (a `URL#hostname`, IPv6 in brackets). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost' || host === '[::1]' || host === '::1') return true;
  if (!IPV4_LOOPBACK.test(host)) return false;
  return host.split('.').every((octet) => Number(octet) <= 255);
}

/** `true` when `url` may be fetched: `https:`, or `http:` on a loopback host. */
export function isAllowedJwksUrl(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
}
