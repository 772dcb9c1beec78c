import { Worker } from 'node:worker_threads';
import { Errors } from '../errors.js';
import { diffJson } from './diff.js';

/**
 * Below this many UTF-16 units (both texts together) a diff runs inline: it takes well under a
 * millisecond, less than a hand-off to a thread. Above it, the diff and the serialisation of its
 * (possibly hundreds of thousands of) lines run on one worker thread, so a diff of two large,
 * unrelated versions never holds up the requests the event loop is serving meanwhile.
 */
export const INLINE_LIMIT = 64 * 1024;

/**
 * Large diffs waiting for the worker, at most: each holds two texts of up to 1 MiB, so a client
 * looping over many connections gets 503 Retry-After rather than growing the queue (and memory).
 */
export const MAX_QUEUED = 8;

export interface DiffRunner {
  /** The diff as UTF-8 JSON: `{stats, complete, hunks, unified}` (see diffJson). */
  run(from: string, to: string, context: number, header: string): Promise<Buffer>;
  close(): Promise<void>;
}

// The worker is this folder's diff.worker: .js when built; under tsx (tests, dev) the .ts file, loaded
// through tsx's loader, which worker threads do not inherit.
const typescript = import.meta.url.endsWith('.ts');
const workerUrl = new URL(`./diff.worker${typescript ? '.ts' : '.js'}`, import.meta.url);

function spawnWorker(): Worker {
  if (!typescript) return new Worker(workerUrl);
  const tsx = import.meta.resolve('tsx/esm/api');
  return new Worker(`import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(workerUrl.href)}); });`, { eval: true });
}

export function createDiffRunner(): DiffRunner {
  let worker: Worker | undefined;
  let nextId = 0;
  const pending = new Map<number, { resolve: (json: Buffer) => void; reject: (error: Error) => void }>();

  const failAll = (error: Error) => {
    for (const job of pending.values()) job.reject(error);
    pending.clear();
    worker = undefined;
  };
  const start = () => {
    const w = spawnWorker();
    w.unref();
    w.on('message', (message: { id: number; bytes?: Uint8Array; error?: string }) => {
      const job = pending.get(message.id);
      if (job === undefined) return;
      pending.delete(message.id);
      const bytes = message.bytes;
      if (bytes !== undefined) job.resolve(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      else job.reject(new Error(`diff worker: ${message.error}`));
    });
    // A crashed worker fails its jobs (500) and is replaced by the next diff.
    w.on('error', (error) => failAll(error));
    w.on('exit', (code) => {
      if (worker === w) failAll(new Error(`diff worker exited with code ${code}`));
    });
    return w;
  };

  return {
    run(from, to, context, header) {
      if (from.length + to.length <= INLINE_LIMIT) return Promise.resolve(Buffer.from(diffJson(from, to, context, header)));
      if (pending.size >= MAX_QUEUED) return Promise.reject(Errors.busy(1));
      worker ??= start();
      const id = nextId++;
      const w = worker;
      return new Promise<Buffer>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        w.postMessage({ id, from, to, context, header });
      });
    },
    async close() {
      const w = worker;
      worker = undefined;
      if (w !== undefined) await w.terminate();
    },
  };
}
