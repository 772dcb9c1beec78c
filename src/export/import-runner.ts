import { Worker } from 'node:worker_threads';
import { AppError, Errors } from '../errors.js';
import { importBatches, readImport, summarise, type ImportItem, type ImportSummary } from './import.read.js';
import type { ImportNote } from './import.validate.js';
import type { ImportWorkerMessage } from './import.worker.js';

/**
 * Below this many bytes a document is read on the event loop: parsing and checking it takes about
 * a millisecond, less than starting a thread. Larger ones are read on a worker thread of their own.
 */
export const INLINE_LIMIT = 256 * 1024;

/**
 * Large documents read at once per process, and waiting, at most: each holds its bytes and, on the
 * worker, its parsed notes. More get 503 Retry-After rather than growing memory.
 */
export const MAX_RUNNING = 1;
export const MAX_WAITING = 2;

/** A checked document: its counts, then its items, a batch at a time. */
export interface ImportDocument extends ImportSummary {
  batches: AsyncIterable<ImportItem[]>;
}

export interface ImportRunner {
  /** Reads `body` (off the event loop when large), refusing a broken document with its 400, then hands it to `write`. */
  run<T>(body: Buffer | undefined, write: (document: ImportDocument) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * The worker's heap limit: a document's parsed notes take about 2-3 times its size (measured, see
 * the report on issue #19), with room for the code itself. Past it the worker stops, not the process.
 */
export function workerHeapMb(maxBytes: number): number {
  return 256 + 4 * Math.ceil(maxBytes / (1024 * 1024));
}

// The worker is this folder's import.worker: .js when built; under tsx (tests, dev) the .ts file,
// loaded through tsx's loader, which worker threads do not inherit.
const typescript = import.meta.url.endsWith('.ts');
const workerUrl = new URL(`./import.worker${typescript ? '.ts' : '.js'}`, import.meta.url);

function spawnWorker(body: Buffer, heapMb: number): Worker {
  // Hand the bytes over instead of copying them; a buffer that shares its memory is copied first.
  const bytes = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? body : Buffer.from(body);
  const options = {
    workerData: { body: bytes },
    transferList: [bytes.buffer as ArrayBuffer],
    resourceLimits: { maxOldGenerationSizeMb: heapMb },
  };
  if (!typescript) return new Worker(workerUrl, options);
  const tsx = import.meta.resolve('tsx/esm/api');
  return new Worker(`import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(workerUrl.href)}); });`, { ...options, eval: true });
}

/** The worker's messages one at a time, as promises; a crash or exit rejects the one awaited. */
function messagesOf(worker: Worker): () => Promise<ImportWorkerMessage> {
  const queued: ImportWorkerMessage[] = [];
  let waiting: { resolve: (message: ImportWorkerMessage) => void; reject: (error: Error) => void } | undefined;
  let failure: Error | undefined;
  const fail = (error: Error) => {
    failure ??= error;
    waiting?.reject(failure);
    waiting = undefined;
  };
  worker.on('message', (message: ImportWorkerMessage) => {
    if (waiting === undefined) queued.push(message);
    else {
      waiting.resolve(message);
      waiting = undefined;
    }
  });
  worker.on('error', (error: Error & { code?: string }) => {
    fail(error.code === 'ERR_WORKER_OUT_OF_MEMORY'
      ? new AppError(400, 'invalid_import', 'Invalid import document: it needs more memory to read than an import may use')
      : error);
  });
  worker.on('exit', (code) => fail(new Error(`import worker exited with code ${code}`)));
  return () => {
    const message = queued.shift();
    if (message !== undefined) return Promise.resolve(message);
    if (failure !== undefined) return Promise.reject(failure);
    return new Promise((resolve, reject) => { waiting = { resolve, reject }; });
  };
}

async function* fromMemory(batches: Iterable<ImportItem[]>): AsyncGenerator<ImportItem[]> {
  yield* batches;
}

/** Checked notes already in memory, as a document to write (small bodies; benchmarks' set-up). */
export function documentOf(notes: ImportNote[]): ImportDocument {
  return { ...summarise(notes), batches: fromMemory(importBatches(notes)) };
}

export function createImportRunner(maxBytes: number): ImportRunner {
  const heapMb = workerHeapMb(maxBytes);
  const workers = new Set<Worker>();
  let running = 0;
  const waiting: Array<() => void> = [];

  const acquire = async () => {
    if (running < MAX_RUNNING) {
      running += 1;
      return;
    }
    if (waiting.length >= MAX_WAITING) throw Errors.busy(5);
    await new Promise<void>((resolve) => waiting.push(resolve)); // the slot passes straight to us
  };
  const release = () => {
    const next = waiting.shift();
    if (next !== undefined) next();
    else running -= 1;
  };

  return {
    async run(body, write) {
      if (body === undefined || body.length <= INLINE_LIMIT) {
        return write(documentOf(readImport(body ?? Buffer.alloc(0))));
      }
      await acquire();
      let worker: Worker | undefined;
      try {
        worker = spawnWorker(body, heapMb);
        workers.add(worker);
        const next = messagesOf(worker);
        const first = await next();
        if (first.type === 'invalid') throw new AppError(first.status, first.code, first.detail);
        if (first.type !== 'ready') throw new Error(`import worker: unexpected ${first.type}`);
        const w = worker;
        const batches = async function* () {
          for (;;) {
            w.postMessage('next');
            const message = await next();
            if (message.type === 'done') return;
            if (message.type !== 'batch') throw new Error(`import worker: unexpected ${message.type}`);
            yield message.items;
          }
        };
        return await write({ ...first.summary, batches: batches() });
      } finally {
        if (worker !== undefined) {
          workers.delete(worker);
          await worker.terminate();
        }
        release();
      }
    },
    async close() {
      await Promise.all([...workers].map((w) => w.terminate()));
    },
  };
}
