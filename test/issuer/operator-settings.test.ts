/**
 * An issuer run for a year by operators who change its settings between restarts: what was
 * promised under the old settings still holds under the new ones.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { decodeProtectedHeader } from 'jose';
import type { RsaPublicJwk } from '../../src/index.js';
import { FileKeyStore, InMemoryKeyStore, type KeyRecord, createIssuer } from '../../src/issuer/index.js';
import { fakeClock } from '../support/jwks-clock.js';

const HOUR = 3600;
const BASE = { issuer: 'https://auth.acme.example', audience: 'https://payments.example', product: 'acme' } as const;

describe('lowering maxLifetime or retentionMargin between restarts', () => {
  it('keeps a key retired under the longer settings published until its tokens have expired', async () => {
    const clock = fakeClock();
    const store = new InMemoryKeyStore();
    const before = await createIssuer({ ...BASE, keyStore: store, now: clock.now }); // 24 h tokens, 1 h margin
    const first = before.keys().find((key) => key.state === 'published')?.kid as string;
    clock.advance(48 * HOUR);
    await before.tick(); // the next key is published
    clock.advance(HOUR + 60);
    expect((await before.tick()).signing).not.toBe(first); // the first key retired a minute ago

    clock.advance(2 * HOUR);
    const after = await createIssuer({
      ...BASE,
      keyStore: store,
      now: clock.now,
      maxLifetime: HOUR,
      rotation: { retentionMargin: 60 },
    });
    expect(after.startReport.removed).toEqual([]);
    expect(after.jwks().document.keys.map((key) => key.kid)).toContain(first);
    expect(store.kids).toContain(first);
    const [retired] = after.keys().filter((key) => key.kid === first);
    expect(retired).toMatchObject({ state: 'retired' });
    const { retiredAt, unpublishAt } = retired as { retiredAt: Date; unpublishAt: Date };
    expect(unpublishAt.getTime() - retiredAt.getTime()).toBe((24 * HOUR + HOUR) * 1000);
  });
});

describe('the retention recorded in a FileKeyStore', () => {
  it('saves each key with the retention it was published under, and reads it back', async () => {
    const directory = join(await mkdtemp(join(tmpdir(), 'paygate-keys-')), 'keys');
    try {
      const clock = fakeClock();
      const store = new FileKeyStore({ directory, sweepAfter: 0 });
      await createIssuer({ ...BASE, keyStore: store, now: clock.now, maxLifetime: 2 * HOUR });
      const saved = JSON.parse(await readFile(join(directory, 'schedule.json'), 'utf8')) as { keys: { retainFor?: number }[] };
      expect(saved.keys.map((key) => key.retainFor)).toEqual([3 * HOUR, 3 * HOUR]);
      expect((await new FileKeyStore({ directory }).loadSchedule()).map((record) => record.retainFor)).toEqual([3 * HOUR, 3 * HOUR]);
    } finally {
      await rm(join(directory, '..'), { recursive: true, force: true });
    }
  });
});

/** Node's own error for a write to a full disk. */
function diskFull(): Error {
  return Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
}

/** An in-memory store whose writes fail as on a full disk while `full` is set; it still reads and signs. */
class FullDiskStore extends InMemoryKeyStore {
  full = false;

  override async generate(): Promise<RsaPublicJwk> {
    if (this.full) throw diskFull();
    return super.generate();
  }

  override async saveSchedule(records: readonly KeyRecord[]): Promise<void> {
    if (this.full) throw diskFull();
    return super.saveSchedule(records);
  }

  override async sweep(keep: readonly string[]): Promise<readonly string[]> {
    if (this.readOnly) throw Object.assign(new Error('EROFS: read-only file system, unlink'), { code: 'EROFS', syscall: 'unlink' });
    return super.sweep(keep);
  }

  /** Set: a read-only mount, whose sweep cannot delete the key a crash left. */
  readOnly = false;
}

describe('a restart on a full disk when a rotation is due', () => {
  it('starts, signs with the key it has, reports the failure, and rotates once a tick can write', async () => {
    const clock = fakeClock();
    const store = new FullDiskStore();
    const first = await createIssuer({ ...BASE, keyStore: store, now: clock.now });
    clock.advance(48 * HOUR + 60); // the next key is due
    store.full = true;

    const restarted = await createIssuer({ ...BASE, keyStore: store, now: clock.now });
    expect((restarted.startReport.rotationFailed as { code?: unknown } | null)?.code).toBe('ENOSPC');
    expect(restarted.startReport.published).toEqual([]);
    const signing = restarted.startReport.signing as string;
    expect(first.keys().find((key) => key.kid === signing)?.state).toBe('signing');
    expect(decodeProtectedHeader(await restarted.sign({ tenant: 'ern:acme/tenants/t-1', scopes: ['pay:processPayments'] })).kid).toBe(
      signing,
    );
    await expect(restarted.tick()).rejects.toMatchObject({ code: 'ENOSPC' }); // a later tick still reports it

    store.full = false;
    expect((await restarted.tick()).published).toHaveLength(2);
  });

  it('still fails the start-up when no key could sign', async () => {
    const store = new FullDiskStore();
    store.full = true;
    await expect(createIssuer({ ...BASE, keyStore: store, now: fakeClock().now })).rejects.toMatchObject({ code: 'ENOSPC' });
  });
});

describe("a publication lead under the contract's hour", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("warns at createIssuer, naming the lead, the hour and the verifier's refetch bound", async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    await createIssuer({ ...BASE, keyStore: new InMemoryKeyStore(), rotation: { publishLead: 0 } });
    expect(warn).toHaveBeenCalledTimes(1);
    const [message, options] = warn.mock.calls[0] as [string, { code: string }];
    expect(options.code).toBe('PAYGATE_AUTH_SHORT_PUBLISH_LEAD');
    expect(message).toContain('rotation.publishLead is 0 s');
    expect(message).toContain('3600 s');
    expect(message).toContain('jwksCooldown (30 s');
  });

  it("does not warn with the hour's lead", async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    await createIssuer({ ...BASE, keyStore: new InMemoryKeyStore(), now: fakeClock().now });
    expect(warn).not.toHaveBeenCalled();
  });
});

describe('an instance whose clock is behind the one that wrote the schedule', () => {
  it('refuses to publish a key (clock_behind) rather than publish one that would sign early for the others', async () => {
    const clock = fakeClock();
    const store = new InMemoryKeyStore();
    const onTime = await createIssuer({ ...BASE, keyStore: store, now: clock.now });
    clock.advance(2 * HOUR);
    const [standby] = onTime.keys().filter((key) => key.state === 'standby');
    await onTime.compromised((standby as { kid: string }).kid); // a new standby, published now
    const before = (await store.loadSchedule()).map((record) => record.kid);

    const behind = await createIssuer({ ...BASE, keyStore: store, now: () => clock.now() - 30 * 60_000 });
    await expect(behind.rotate()).rejects.toMatchObject({ code: 'clock_behind' });
    expect((await store.loadSchedule()).map((record) => record.kid)).toEqual(before);
  });
});

describe('a start-up on a read-only mount holding a key a crash left', () => {
  it('starts and signs, the sweep reported as deferred', async () => {
    const clock = fakeClock();
    const store = new FullDiskStore();
    await createIssuer({ ...BASE, keyStore: store, now: clock.now });
    await store.generate(); // generated, then a crash before the schedule was saved
    clock.advance(2 * HOUR);
    store.readOnly = true;

    const replica = await createIssuer({ ...BASE, keyStore: store, now: clock.now });
    expect((replica.startReport.rotationFailed as { code?: unknown } | null)?.code).toBe('EROFS');
    expect(replica.startReport.signing).not.toBeNull();
    await expect(replica.sign({ tenant: 'ern:acme/tenants/t-1', scopes: ['pay:processPayments'] })).resolves.toMatch(/^ey/);
  });
});
