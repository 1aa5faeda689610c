/**
 * Two instances over one key store, as docs/issuer.md allows: one runs the schedule, the other
 * serves and, now and then, is where an operator calls rotate() or compromised(). The second's
 * view of the schedule may be older than the store's: what it saves must not drop the keys the
 * first published since it last read the store.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryKeyStore, type Issuer, createIssuer } from '../../src/issuer/index.js';
import { type FakeClock, fakeClock } from '../support/jwks-clock.js';

const HOUR = 3600;

async function twoInstances(): Promise<{ scheduler: Issuer; other: Issuer; clock: FakeClock; store: InMemoryKeyStore }> {
  const clock = fakeClock();
  const store = new InMemoryKeyStore();
  const options = {
    issuer: 'https://auth.acme.example',
    audience: 'https://payments.example',
    product: 'acme',
    keyStore: store,
    now: clock.now,
  };
  const scheduler = await createIssuer(options);
  const other = await createIssuer(options);
  return { scheduler, other, clock, store };
}

const savedKids = async (store: InMemoryKeyStore) => new Set((await store.loadSchedule()).map((record) => record.kid));

describe('an instance whose view of the shared store is older than the store', () => {
  it('rotate() returns the key the other instance published, and keeps it in the store', async () => {
    const { scheduler, other, clock, store } = await twoInstances();
    clock.advance(48.5 * HOUR);
    const { published } = await scheduler.tick();
    expect(published).toHaveLength(2);
    const waiting = await other.rotate();
    expect(waiting.kid).toBe(published[0]);
    const saved = await savedKids(store);
    for (const kid of published) expect(saved.has(kid)).toBe(true);
    expect(store.kids).toEqual(expect.arrayContaining([...published]));
  });

  it('compromised() of a key the other instance published finds it, and keeps the key that signs now', async () => {
    const { scheduler, other, clock, store } = await twoInstances();
    clock.advance(48.5 * HOUR);
    const [next] = (await scheduler.tick()).published as [string, string];
    clock.advance(HOUR);
    const signing = (await scheduler.tick()).signing;
    expect(signing).toBe(next);
    const retired = scheduler.keys().find((key) => key.state === 'retired')?.kid as string;
    const report = await other.compromised(retired);
    expect(report.signing).toBe(next);
    expect((await savedKids(store)).has(next)).toBe(true);
    expect(store.kids).toContain(next);
  });
});
