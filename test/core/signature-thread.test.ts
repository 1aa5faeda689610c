import { generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { type Pkcs1Hash, Pkcs1Encoding } from '../../src/core/pkcs1-encoding.js';
import { SignatureThread, type ThreadKey } from '../../src/core/signature-thread.js';

interface TestKey extends ThreadKey {
  readonly privateKey: KeyObject;
}

function testKey(modulusLength = 2048): TestKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength });
  const modulusBytes = modulusLength / 8;
  return { privateKey, keyObject: publicKey, modulusBytes, encoding: (hash) => new Pkcs1Encoding(hash, modulusBytes).copy() };
}

interface Case {
  readonly name: string;
  readonly key: TestKey;
  readonly hash: Pkcs1Hash;
  readonly input: string;
  readonly signature: Uint8Array;
  readonly valid: boolean;
}

/** What this thread runs of a burst: `crypto.verify`'s verdict, recorded, after `delayMs` of work. */
function hereRecorder(delayMs = 0): { readonly ran: Set<Case['input']>; readonly verifyHere: (key: TestKey, hash: Pkcs1Hash, input: string, signature: Uint8Array) => boolean } {
  const ran = new Set<string>();
  return {
    ran,
    verifyHere: (key, hash, input, signature) => {
      ran.add(input);
      const until = performance.now() + delayMs;
      while (performance.now() < until);
      return signature.byteLength === key.modulusBytes && verify(hash, Buffer.from(input), key.keyObject, signature);
    },
  };
}

let key: TestKey;
let otherKey: TestKey;
let smallKey: TestKey;

beforeAll(() => {
  key = testKey();
  otherKey = testKey();
  smallKey = testKey(512);
});

/** Every kind of signature, valid and not, each over a signing input of its own. */
function cases(round: number): Case[] {
  const signed = (name: string, hash: Pkcs1Hash, { by = key, checkedAs = hash } = {}): Case => {
    const input = `eyJhbGciOiJSUzI1NiJ9.${Buffer.from(`${name} ${round}`).toString('base64url')}`;
    const signature = sign(hash, Buffer.from(input), by.privateKey);
    return { name, key: by === smallKey ? smallKey : key, hash: checkedAs, input, signature, valid: by !== otherKey && checkedAs === hash };
  };
  const altered = (name: string, alter: (signature: Buffer) => Uint8Array): Case => {
    const base = signed(name, 'sha256');
    return { ...base, signature: alter(Buffer.from(base.signature)), valid: false };
  };
  return [
    signed('RS256', 'sha256'),
    signed('RS384', 'sha384'),
    signed('RS512', 'sha512'),
    altered('one bit flipped', (signature) => {
      signature[100] = (signature[100] as number) ^ 0x10;
      return signature;
    }),
    signed('signed with sha256, checked as sha384', 'sha256', { checkedAs: 'sha384' }),
    signed('signed by another key', 'sha256', { by: otherKey }),
    altered('one byte short', (signature) => signature.subarray(1)),
    altered('one byte long', (signature) => Buffer.concat([Buffer.alloc(1), signature])),
    altered('empty', () => new Uint8Array(0)),
    altered('not below the modulus', () => new Uint8Array(256).fill(0xff)),
    // A 512-bit modulus cannot hold an RS512 encoding: refused, never thrown.
    signed('RS512 with a 512-bit key', 'sha256', { by: smallKey, checkedAs: 'sha512' }),
  ];
}

let thread: SignatureThread<TestKey> | undefined;

afterEach(async () => {
  await thread?.close();
  thread = undefined;
});

describe('signature thread: a burst shared between the worker and this thread', () => {
  test('the worker starts on first use and is online once whenReady resolves true', async () => {
    thread = new SignatureThread(hereRecorder().verifyHere);
    expect(await thread.whenReady()).toBe(true);
    expect(thread.ready).toBe(true);
  });

  test('every verification settles with its own verdict, whichever thread claimed it', async () => {
    const here = hereRecorder();
    thread = new SignatureThread(here.verifyHere);
    await thread.whenReady();
    const burst = Array.from({ length: 20 }, (_, round) => cases(round)).flat();
    const verdicts = await Promise.all(burst.map((c) => thread!.verify(c.key, c.hash, c.input, c.signature)));
    expect(verdicts).toEqual(burst.map((c) => c.valid));
    expect(thread.pending).toBe(0);
    // This thread took its share back from the far end, and left the rest to the worker.
    expect(here.ran.size).toBeGreaterThan(0);
    expect(here.ran.size).toBeLessThan(new Set(burst.map((c) => c.input)).size);
  });

  test('the worker refuses what crypto.verify refuses, and accepts what it accepts, case by case', async () => {
    // This thread is slow, so the worker claims nearly all of the burst; each case is checked
    // where the worker ran it.
    const here = hereRecorder(2);
    thread = new SignatureThread(here.verifyHere);
    await thread.whenReady();
    const burst = Array.from({ length: 10 }, (_, round) => cases(round)).flat();
    const verdicts = await Promise.all(burst.map((c) => thread!.verify(c.key, c.hash, c.input, c.signature)));
    const byWorker = new Map<string, boolean[]>();
    burst.forEach((c, index) => {
      expect(verdicts[index], c.name).toBe(c.valid);
      if (!here.ran.has(c.input)) byWorker.set(c.name, [...(byWorker.get(c.name) ?? []), verdicts[index] as boolean]);
    });
    for (const c of cases(0)) expect(byWorker.get(c.name), `the worker ran no "${c.name}" case`).toBeDefined();
  });

  test('jobs asked for in later turns, while the worker is busy, are fed to it and all settle', async () => {
    thread = new SignatureThread(hereRecorder().verifyHere);
    await thread.whenReady();
    const waves: Promise<boolean>[] = [];
    for (let wave = 0; wave < 5; wave += 1) {
      waves.push(...cases(wave).map((c) => thread!.verify(c.key, c.hash, c.input, c.signature)));
      await new Promise((resolve) => setImmediate(resolve));
    }
    const expected = Array.from({ length: 5 }, (_, wave) => cases(wave).map((c) => c.valid)).flat();
    expect(await Promise.all(waves)).toEqual(expected);
  });
});

describe('signature thread: nothing is lost when the worker goes', () => {
  test('closed at any point of a batch (even mid-way through a job the worker claimed), every verification still settles with its verdict', async () => {
    const burst = Array.from({ length: 20 }, (_, round) => cases(round)).flat();
    for (let afterMs = 0; afterMs <= 12; afterMs += 1) {
      thread = new SignatureThread(hereRecorder(0.5).verifyHere);
      await thread.whenReady();
      const verdicts = Promise.all(burst.map((c) => thread!.verify(c.key, c.hash, c.input, c.signature)));
      await new Promise((resolve) => setTimeout(resolve, afterMs));
      await thread.close();
      expect(await verdicts, `closed after ${afterMs} ms`).toEqual(burst.map((c) => c.valid));
    }
  });

  test('closed before the end of the turn, what was asked for runs here', async () => {
    const here = hereRecorder();
    thread = new SignatureThread(here.verifyHere);
    await thread.whenReady();
    const burst = cases(0);
    const verdicts = Promise.all(burst.map((c) => thread!.verify(c.key, c.hash, c.input, c.signature)));
    await thread.close();
    expect(await verdicts).toEqual(burst.map((c) => c.valid));
    expect(here.ran.size).toBe(new Set(burst.map((c) => c.input)).size);
  });

  test('once closed it is no longer ready, and what is asked of it still runs here', async () => {
    const here = hereRecorder();
    thread = new SignatureThread(here.verifyHere);
    await thread.whenReady();
    await thread.close();
    expect(thread.ready).toBe(false);
    expect(await thread.whenReady()).toBe(false);
    const [rs256] = cases(1);
    expect(await thread.verify(rs256!.key, rs256!.hash, rs256!.input, rs256!.signature)).toBe(true);
    expect(here.ran.has(rs256!.input)).toBe(true);
  });
});

describe('signature thread: keys do not outlive their use', () => {
  /** A full collection, with `gc` reached without `--expose-gc` on the command line. */
  const collectGarbage = (() => {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  })();

  /** Sends a burst signed by a key of its own through `target`; the key is referenced nowhere after. */
  async function burstWithOwnKey(target: SignatureThread<TestKey>): Promise<boolean[]> {
    const own = testKey();
    const burst = Array.from({ length: 8 }, (_, round) => {
      const input = `eyJhbGciOiJSUzI1NiJ9.${Buffer.from(`own key ${round}`).toString('base64url')}`;
      return { input, signature: sign('sha256', Buffer.from(input), own.privateKey) };
    });
    return Promise.all(burst.map((c) => target.verify(own, 'sha256', c.input, c.signature)));
  }

  test('once a key is collected here, the worker is told to forget it', async () => {
    const posted = vi.spyOn(Worker.prototype, 'postMessage');
    /** The key ids of the messages of `kind` posted to the worker since the last `mockClear()`. */
    const idsPosted = (kind: 'key' | 'forget'): unknown[] =>
      posted.mock.calls.map(([message]) => message as { kind: string; id?: number }).filter((m) => m.kind === kind).map((m) => m.id);
    try {
      thread = new SignatureThread(hereRecorder(2).verifyHere);
      await thread.whenReady();
      expect(await burstWithOwnKey(thread)).toEqual(Array.from({ length: 8 }, () => true));
      const registered = idsPosted('key');
      expect(registered).toHaveLength(1);
      posted.mockClear();
      // Finalization callbacks run in a task after the collection that found the key unreachable.
      for (let attempt = 0; attempt < 20 && idsPosted('forget').length === 0; attempt += 1) {
        collectGarbage();
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(idsPosted('forget')).toEqual(registered);
    } finally {
      posted.mockRestore();
    }
  });
});
