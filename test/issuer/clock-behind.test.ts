/**
 * An instance whose clock is far behind the one that wrote the schedule (a VM booted before its
 * clock was set, a host whose NTP failed): every key the schedule holds was published at a time
 * its clock has not reached. Publishing a key early is harmless, dropping one is not: a verifier
 * that downloads this instance's JWKS must still find every key the store's other instances sign
 * with.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryKeyStore, createIssuer } from '../../src/issuer/index.js';
import { fakeClock } from '../support/jwks-clock.js';

const HOUR = 3600;
const DAY = 86_400;

describe('an instance whose clock is a day behind the store', () => {
  it('serves every key the schedule publishes, none dropped as published in its future', async () => {
    const clock = fakeClock();
    const store = new InMemoryKeyStore();
    const options = { issuer: 'https://auth.acme.example', audience: 'https://payments.example', product: 'acme', keyStore: store };
    const onTime = await createIssuer({ ...options, now: clock.now });
    clock.advance(5 * HOUR);
    await onTime.tick();
    const served = onTime.jwks().document.keys.map((key) => key.kid);
    expect(served).toHaveLength(2);

    const behind = await createIssuer({ ...options, now: () => clock.now() - DAY * 1000 });
    expect(behind.jwks().document.keys.map((key) => key.kid)).toEqual(served);
  });
});
