/**
 * A thread of its own for RS256/384/512 checks when verifications come in bursts.
 *
 * A verification alone runs synchronously (the fastest a single call can be). When many are in
 * flight, the `node` engine hands them here: once per turn of the event loop, what was asked for
 * goes to one worker thread as a single batch, and the worker opens each signature with the raw
 * RSA public operation and compares it with the expected encoding, as the synchronous path does
 * (see `pkcs1-encoding.ts`). Meanwhile this thread, between its other work, takes verifications
 * back from the far end of the newest batch and runs them itself: each verification is claimed
 * exactly once, by whichever thread reaches it first (an atomic compare-and-swap on memory both
 * share). Both cores work, neither waits for the other, and neither pays `crypto.verify`'s
 * per-call set-up or the thread pool's per-call hand-off.
 *
 * The worker is started on the first burst; the pool serves until it is online. It keeps the
 * process alive only while it holds verifications. If it fails or exits, every verification it
 * held is run here and the pool serves from then on: no verification is lost.
 *
 * @module paygate-auth
 */
import type { Pkcs1Hash } from './pkcs1-encoding.js';

type NodeKeyObject = import('node:crypto').KeyObject;
type WorkerThreads = typeof import('node:worker_threads');
type NodeWorker = import('node:worker_threads').Worker;

/** What the worker needs of a key. */
export interface ThreadKey {
  readonly keyObject: NodeKeyObject;
  /** Bytes of the modulus: every signature must be exactly this long. */
  readonly modulusBytes: number;
  /**
   * The EMSA-PKCS1-v1_5 encoding for `hash` with any digest in place (the worker writes its own).
   * @throws {RangeError} when the modulus cannot hold it.
   */
  encoding(hash: Pkcs1Hash): Uint8Array;
}

/** Runs one verification synchronously, here. */
export type VerifyHere<K extends ThreadKey> = (key: K, hash: Pkcs1Hash, signingInput: string, signature: Uint8Array) => boolean;

/** One verification asked for. */
interface Job<K extends ThreadKey> {
  readonly key: K;
  readonly hash: Pkcs1Hash;
  readonly signingInput: string;
  readonly signature: Uint8Array;
  readonly resolve: (valid: boolean) => void;
}

/**
 * Jobs sent together. `claims` holds, per job, who has it (nobody yet, the worker, this thread)
 * and then the worker's verdict; after the last job, how many jobs the worker has passed.
 */
interface Batch<K extends ThreadKey> {
  readonly jobs: readonly Job<K>[];
  readonly claims: Int32Array;
  /** Jobs whose verdict this thread has read. */
  collected: number;
  /** The last job this thread has not tried to take back; -1 when it has tried them all. */
  tail: number;
}

/** Jobs left for the worker below which the waiting ones are sent: about two RSA operations' time. */
const LOW_WATER = 3;

const UNCLAIMED = 0;
const BY_WORKER = 1;
const BY_HERE = 2;
const VALID = 3;
const INVALID = 4;

const HASHES: readonly Pkcs1Hash[] = ['sha256', 'sha384', 'sha512'];
const HASH_CODE: Readonly<Record<Pkcs1Hash, number>> = { sha256: 0, sha384: 1, sha512: 2 };

/** Bytes before each job's signing input in a batch: key id (u32), hash (u8), input length (u32), signature length (u16). */
const JOB_HEADER = 11;

/**
 * The worker's own code, self-contained (it runs as a script and imports nothing of ours): keys
 * arrive once each; a batch arrives packed in one buffer with its claims; one byte per job goes back.
 */
const WORKER_SOURCE = `'use strict';
const { parentPort } = require('node:worker_threads');
const crypto = require('node:crypto');
const HASHES = ${JSON.stringify(HASHES)};
const keys = new Map();
function check(key, hash, input, signature) {
  if (key === undefined || signature.length !== key.modulusBytes) return false;
  const expected = key.encodings[hash];
  if (expected == null) return false;
  let opened;
  try { opened = crypto.publicDecrypt(key.raw, signature); } catch { return false; }
  const digest = crypto.hash(HASHES[hash], input, 'binary');
  expected.latin1Write(digest, expected.length - digest.length);
  return opened.equals(expected);
}
function run(message) {
  const buffer = Buffer.from(message.buffer);
  const claims = message.claims;
  const count = claims.length - 1;
  let at = 0;
  for (let i = 0; i < count; i += 1) {
    const inputEnd = at + ${JOB_HEADER} + buffer.readUInt32LE(at + 5);
    const signatureEnd = inputEnd + buffer.readUInt16LE(at + 9);
    if (Atomics.compareExchange(claims, i, ${UNCLAIMED}, ${BY_WORKER}) === ${UNCLAIMED}) {
      const key = keys.get(buffer.readUInt32LE(at));
      const valid = check(key, buffer[at + 4], buffer.subarray(at + ${JOB_HEADER}, inputEnd), buffer.subarray(inputEnd, signatureEnd));
      Atomics.store(claims, i, valid ? ${VALID} : ${INVALID});
    }
    at = signatureEnd;
    Atomics.store(claims, count, i + 1);
  }
  parentPort.postMessage(message.seq);
}
parentPort.on('message', (message) => {
  if (message.kind === 'batch') run(message);
  else if (message.kind === 'key') {
    keys.set(message.id, {
      raw: { key: message.key, padding: crypto.constants.RSA_NO_PADDING },
      modulusBytes: message.modulusBytes,
      encodings: message.encodings.map((bytes) => bytes === null ? null : Buffer.from(bytes)),
    });
  } else if (message.kind === 'forget') keys.delete(message.id);
});
`;

function loadWorkerThreads(): WorkerThreads | undefined {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  return proc?.getBuiltinModule?.('node:worker_threads') as WorkerThreads | undefined;
}

type State = 'idle' | 'starting' | 'ready' | 'failed';

/** The worker, the batches it holds, and this thread's share of them. */
export class SignatureThread<K extends ThreadKey> {
  readonly #verifyHere: VerifyHere<K>;
  #state: State = 'idle';
  #worker: NodeWorker | undefined;
  /** Asked for this turn, sent at its end. */
  #queue: Job<K>[] = [];
  /** Sent and not yet answered, by sequence number (oldest first). */
  readonly #batches = new Map<number, Batch<K>>();
  #seq = 0;
  #turnScheduled = false;
  #pending = 0;
  readonly #keyIds = new WeakMap<K, number>();
  #nextKeyId = 0;
  readonly #forget: FinalizationRegistry<number> | undefined;
  readonly #endTurn = (): void => this.#runEndOfTurn();

  constructor(verifyHere: VerifyHere<K>) {
    this.#verifyHere = verifyHere;
    this.#forget = typeof FinalizationRegistry === 'function'
      ? new FinalizationRegistry((id) => this.#worker?.postMessage({ kind: 'forget', id }))
      : undefined;
  }

  /** `true` once the worker is online; the first call starts it. */
  get ready(): boolean {
    if (this.#state === 'idle') this.#start();
    return this.#state === 'ready';
  }

  /** Verifications asked for and not yet settled. */
  get pending(): number {
    return this.#pending;
  }

  /** Starts the worker if need be; resolves `true` once it is online, `false` if it cannot be. */
  whenReady(): Promise<boolean> {
    if (this.#state === 'idle') this.#start();
    const worker = this.#worker;
    if (this.#state !== 'starting' || worker === undefined) return Promise.resolve(this.#state === 'ready');
    return new Promise((resolve) => {
      const settle = (): void => resolve(this.#state === 'ready');
      worker.once('online', settle);
      worker.once('exit', settle);
    });
  }

  /** Queues a verification; it settles once the worker or this thread has run it. */
  verify(key: K, hash: Pkcs1Hash, signingInput: string, signature: Uint8Array): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      this.#pending += 1;
      const settle = (valid: boolean): void => {
        this.#pending -= 1;
        resolve(valid);
      };
      this.#queue.push({ key, hash, signingInput, signature, resolve: settle });
      this.#scheduleTurn();
    });
  }

  /** Stops the worker; what it held runs here. */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#fail();
    await worker?.terminate();
  }

  #start(): void {
    const threads = loadWorkerThreads();
    let worker: NodeWorker;
    try {
      if (threads === undefined) throw new Error('no worker_threads');
      // No inherited command-line options: the worker needs none (and no preloads or profilers).
      worker = new threads.Worker(WORKER_SOURCE, { eval: true, name: 'paygate-auth signatures', execArgv: [] });
    } catch {
      this.#state = 'failed';
      return;
    }
    this.#worker = worker;
    this.#state = 'starting';
    worker.unref();
    worker.on('online', () => {
      if (this.#state === 'starting') this.#state = 'ready';
    });
    worker.on('message', () => this.#answered());
    worker.on('error', () => this.#fail());
    worker.on('exit', () => this.#fail());
  }

  #scheduleTurn(): void {
    if (this.#turnScheduled) return;
    this.#turnScheduled = true;
    setImmediate(this.#endTurn);
  }

  /**
   * At the end of a turn: sends what waits to the worker when the worker is about to run out, then
   * runs one verification here: the newest waiting one, else one taken back from a batch.
   */
  #runEndOfTurn(): void {
    this.#turnScheduled = false;
    if (this.#state !== 'ready') {
      this.#runAllHere();
      return;
    }
    this.#collect();
    if (this.#queue.length > 0 && this.#workerLeft() < LOW_WATER) this.#sendQueue();
    const job = this.#queue.pop() ?? this.#takeBack();
    if (job === undefined) return;
    this.#runHere(job);
    this.#scheduleTurn();
  }

  /** Jobs sent to the worker that it has not reached yet (nor this thread taken back). */
  #workerLeft(): number {
    let left = 0;
    for (const batch of this.#batches.values()) {
      left += Math.max(0, batch.tail + 1 - Atomics.load(batch.claims, batch.jobs.length));
    }
    return left;
  }

  /** Claims for this thread the last unclaimed job of the newest batch, if the worker has left one. */
  #takeBack(): Job<K> | undefined {
    let newest: Batch<K> | undefined;
    for (const batch of this.#batches.values()) if (batch.tail >= 0) newest = batch;
    if (newest === undefined) return undefined;
    const index = newest.tail;
    if (Atomics.compareExchange(newest.claims, index, UNCLAIMED, BY_HERE) === UNCLAIMED) {
      newest.tail -= 1;
      return newest.jobs[index];
    }
    newest.tail = -1; // the worker has reached this far, so it has claimed every job before
    return this.#takeBack();
  }

  #runAllHere(): void {
    const queued = this.#queue;
    this.#queue = [];
    for (const job of queued) this.#runHere(job);
  }

  #sendQueue(): void {
    const jobs = this.#queue;
    this.#queue = [];
    this.#send(jobs);
  }

  #runHere(job: Job<K>): void {
    let valid = false;
    try {
      valid = this.#verifyHere(job.key, job.hash, job.signingInput, job.signature);
    } finally {
      job.resolve(valid);
    }
  }

  #send(jobs: Job<K>[]): void {
    const worker = this.#worker as NodeWorker;
    let size = 0;
    for (const job of jobs) {
      this.#register(worker, job.key);
      size += JOB_HEADER + job.signingInput.length + job.signature.byteLength;
    }
    const buffer = Buffer.from(new ArrayBuffer(size));
    let at = 0;
    for (const job of jobs) {
      buffer.writeUInt32LE(this.#keyIds.get(job.key) as number, at);
      buffer[at + 4] = HASH_CODE[job.hash];
      buffer.writeUInt32LE(job.signingInput.length, at + 5);
      buffer.writeUInt16LE(job.signature.byteLength, at + 9);
      at += JOB_HEADER;
      at += buffer.write(job.signingInput, at, 'latin1');
      buffer.set(job.signature, at);
      at += job.signature.byteLength;
    }
    // One claim per job, then the worker's progress (the jobs it has passed).
    const claims = new Int32Array(new SharedArrayBuffer((jobs.length + 1) * Int32Array.BYTES_PER_ELEMENT));
    const seq = this.#seq++;
    if (this.#batches.size === 0) worker.ref();
    this.#batches.set(seq, { jobs, claims, collected: 0, tail: jobs.length - 1 });
    worker.postMessage({ kind: 'batch', seq, claims, buffer: buffer.buffer }, [buffer.buffer]);
  }

  /** Sends a key, with its encodings, the first time the worker needs it. */
  #register(worker: NodeWorker, key: K): void {
    if (this.#keyIds.has(key)) return;
    const id = this.#nextKeyId++;
    this.#keyIds.set(key, id);
    this.#forget?.register(key, id);
    const encodings = HASHES.map((hash) => {
      try {
        return key.encoding(hash).slice();
      } catch {
        return null; // the modulus cannot hold this hash's encoding: the worker refuses such jobs
      }
    });
    worker.postMessage({ kind: 'key', id, key: key.keyObject, modulusBytes: key.modulusBytes, encodings });
  }

  /** The worker finished a batch (and may be idle): settles what it did, and feeds it. */
  #answered(): void {
    this.#collect();
    if (this.#queue.length > 0 && this.#workerLeft() < LOW_WATER) this.#sendQueue();
  }

  /** Settles every verification the worker has finished since the last look. */
  #collect(): void {
    for (const [seq, batch] of this.#batches) {
      const { jobs, claims } = batch;
      const passed = Atomics.load(claims, jobs.length);
      for (let i = batch.collected; i < passed; i += 1) {
        const verdict = Atomics.load(claims, i);
        if (verdict !== BY_HERE) (jobs[i] as Job<K>).resolve(verdict === VALID);
      }
      batch.collected = passed;
      if (passed < jobs.length) return;
      this.#batches.delete(seq);
      if (this.#batches.size === 0) this.#worker?.unref();
    }
  }

  /** The worker is gone: whatever it held runs here, and the pool serves what comes next. */
  #fail(): void {
    if (this.#state === 'failed') return;
    this.#state = 'failed';
    this.#worker?.unref();
    const held = [...this.#batches.values()];
    this.#batches.clear();
    for (const { jobs, claims, collected } of held) {
      for (let i = collected; i < jobs.length; i += 1) {
        const verdict = Atomics.load(claims, i);
        const job = jobs[i] as Job<K>;
        if (verdict === VALID || verdict === INVALID) job.resolve(verdict === VALID);
        else if (verdict !== BY_HERE) this.#runHere(job); // not reached, or cut off mid-way
      }
    }
    this.#runAllHere();
  }
}
