import { describe, expect, it } from 'vitest';
import { createPaymentLinkHandler } from '../../src/payment-links/index.js';

const base = { payPageUrl: 'https://pay.example.test/l' };

describe('createPaymentLinkHandler options', () => {
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

  it('accepts an http pay-page URL on a loopback host', () => {
    expect(() => createPaymentLinkHandler({ payPageUrl: 'http://127.0.0.1:3000/pay' })).not.toThrow();
  });
});
