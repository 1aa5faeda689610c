import { describe, expect, it } from 'vitest';
import { createPaymentLinkHandler } from '../../src/payment-links/index.js';

const base = { payPageUrl: 'https://pay.example.test/l' };

describe('createPaymentLinkHandler options', () => {
  it('reads a payPageUrl holding a long run of slashes in linear time (attack: a PAY_PAGE_URL made to backtrack)', () => {
    // `/\/+$/` took quadratic time over it: seconds for these 100 000 slashes, not milliseconds.
    const payPageUrl = `https://pay.example.test/${'/'.repeat(100_000)}l`;
    const started = performance.now();
    expect(typeof createPaymentLinkHandler({ payPageUrl })).toBe('function');
    expect(performance.now() - started).toBeLessThan(2000); // generous margin: linear is a few ms
  });

  it('works with only the pay-page URL, on in-memory defaults', () => {
    const handler = createPaymentLinkHandler(base);
    expect(typeof handler).toBe('function');
    expect(typeof handler.store.insert).toBe('function');
  });

  it.each([
    ['payPageUrl missing', {}, /payPageUrl/],
    ['payPageUrl over plain http', { payPageUrl: 'http://pay.example.test/l' }, /payPageUrl/],
    ['payPageUrl with a query', { payPageUrl: 'https://pay.example.test/l?x=1' }, /payPageUrl/],
    ['payPageUrl not a URL', { payPageUrl: 'pay page' }, /payPageUrl/],
    ['payPageUrl with an empty query (the code would land in it)', { payPageUrl: 'https://pay.example.test/l?' }, /payPageUrl/],
    ['payPageUrl with an empty fragment (the code would land in it)', { payPageUrl: 'https://pay.example.test/l#' }, /payPageUrl/],
    ['payPageUrl with a password', { payPageUrl: 'https://:secret@pay.example.test/l' }, /payPageUrl/],
    ['a store without its methods', { ...base, store: {} }, /store/],
    ['a directory without its methods', { ...base, directory: { findDepartment() {} } }, /directory/],
    ['a clock that is not a function', { ...base, now: 5 }, /now/],
    ['an id generator without linkCode', { ...base, ids: { uuid: () => 'x' } }, /ids/],
    ['idempotencyKeyTtl below a minute', { ...base, idempotencyKeyTtl: 59 }, /idempotencyKeyTtl/],
    ['idempotencyKeyTtl NaN', { ...base, idempotencyKeyTtl: Number.NaN }, /idempotencyKeyTtl/],
    ['notificationTimeout of 0 ms', { ...base, notificationTimeout: 0 }, /notificationTimeout must be .*got 0/],
    ['notificationTimeout above a minute', { ...base, notificationTimeout: 60_001 }, /notificationTimeout must be .*got 60001/],
    ['notificationTimeout NaN', { ...base, notificationTimeout: Number.NaN }, /notificationTimeout must be .*got NaN/],
    ['notificationTimeout as a string', { ...base, notificationTimeout: '5000' }, /notificationTimeout must be .*got/],
    ['maxBodyBytes above 1 MiB', { ...base, maxBodyBytes: 2 ** 21 }, /maxBodyBytes/],
    ['a misspelt option', { ...base, payPageURL: 'https://x.test' }, /payPageURL/],
    ['a realm with a quote', { ...base, realm: 'a"b' }, /realm/],
    // No header can carry it: every 201 would fail after its link was stored.
    ['a locationPrefix with a character beyond Latin-1', { ...base, locationPrefix: '/płatności/' }, /locationPrefix/],
    ['a locationPrefix with a control character', { ...base, locationPrefix: '/links\u0001/' }, /locationPrefix/],
    ['a locationPrefix with DEL', { ...base, locationPrefix: '/links\u007f/' }, /locationPrefix/],
  ])('throws a TypeError naming the option for %s', (_label, deps, pattern) => {
    expect(() => createPaymentLinkHandler(deps as never)).toThrow(TypeError);
    expect(() => createPaymentLinkHandler(deps as never)).toThrow(pattern);
  });

  it.each(['http://127.0.0.1:3000/pay', 'http://127.0.0.2/pay', 'http://localhost/pay', 'http://[::1]/pay'])(
    'accepts an http pay-page URL on a loopback host (%s), as JWKS addresses',
    (payPageUrl) => {
      expect(() => createPaymentLinkHandler({ payPageUrl })).not.toThrow();
    },
  );

  it('refuses an http pay-page URL on a name under .localhost, which no rule of ours calls loopback', () => {
    expect(() => createPaymentLinkHandler({ payPageUrl: 'http://shop.localhost/pay' })).toThrow(/payPageUrl/);
  });

  it.each([
    ['a URL over plain http', 'http://pay.example.test/l', 'got "http://pay.example.test/l"'],
    ['no URL', 'pay page', 'got "pay page", which is no URL'],
    ['a number', 42, 'got 42'],
  ])('names what it found when it refuses a pay-page URL: %s', (_label, payPageUrl, found) => {
    expect(() => createPaymentLinkHandler({ payPageUrl } as never)).toThrow(found);
  });

  it('never quotes the credentials of a pay-page URL it refuses', () => {
    expect(() => createPaymentLinkHandler({ payPageUrl: 'https://user:secret@pay.example.test/l' })).toThrow(/credentials \(not shown\)/);
    expect(() => createPaymentLinkHandler({ payPageUrl: 'https://user:secret@pay.example.test/l' })).not.toThrow(/secret/);
  });
});
