import type { Readable } from 'node:stream';
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../shared/worker.js';
import { errorCodes } from 'fastify';
import { Errors } from '../errors.js';
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
  /**
   * Reads the request body (off the event loop when large: its bytes go to the worker as they
   * arrive and are never gathered here), refusing a broken document with its 400, then hands the
   * checked document to `write`. `length` is the Content-Length, when given.
   */
  run<T>(body: Readable, length: number | undefined, write: (document: ImportDocument) => Promise<T>): Promise<T>;
  /**
   * Runs `task` in the queue's slot, whatever its size: a zip's cost is not its size (it is
   * inflated, hashed and stored), so every zip import waits its turn here, and past MAX_WAITING is
   * 503 like a large document. `run` inside it reads a document without queueing again.
   */
  queued<T>(task: (run: ImportRunner['run']) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * The worker's heap limit: a document's parsed notes take about 2-3 times its size (measured),
 * with room for the code itself. Past it the worker stops, not the process.
 */
export function workerHeapMb(maxBytes: number): number {
  return 256 + 4 * Math.ceil(maxBytes / (1024 * 1024));
}

function spawnWorker(length: number | undefined, heapMb: number): Worker {
  return startWorker(import.meta.url, 'import.worker', {
    workerData: { length },
    resourceLimits: { maxOldGenerationSizeMb: heapMb },
  });
}

const tooLarge = () => new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE();

/**
 * The body's first INLINE_LIMIT bytes, and whether that was all of it. Bytes past the route's limit
 * are refused like Fastify refuses them (413), here because this route reads its own body.
 */
async function head(
  body: AsyncIterator<Buffer>,
  maxBytes: number,
): Promise<{ chunks: Buffer[]; bytes: number; ended: boolean }> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  while (bytes <= INLINE_LIMIT) {
    const next = await body.next();
    if (next.done === true) return { chunks, bytes, ended: true };
    bytes += next.value.length;
    if (bytes > maxBytes) throw tooLarge();
    chunks.push(next.value);
  }
  return { chunks, bytes, ended: false };
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
    fail(
      error.code === 'ERR_WORKER_OUT_OF_MEMORY'
        ? Errors.invalidImport('it needs more memory to read than an import may use')
        : error,
    );
  });
  worker.on('exit', (code) => fail(new Error(`import worker exited with code ${code}`)));
  return () => {
    const message = queued.shift();
    if (message !== undefined) return Promise.resolve(message);
    if (failure !== undefined) return Promise.reject(failure);
    return new Promise((resolve, reject) => {
      waiting = { resolve, reject };
    });
  };
}

async function* fromMemory(batches: Iterable<ImportItem[]>): AsyncGenerator<ImportItem[]> {
  yield* batches;
}

/** Checked notes already in memory, as a document to write (small bodies; benchmarks' set-up). */
export function documentOf(
  notes: ImportNote[],
  folders: string[] = [],
  attachments: ImportSummary['attachments'] = [],
): ImportDocument {
  return { ...summarise({ notes, folders, attachments }), batches: fromMemory(importBatches(notes)) };
}

/** Bytes handed to the worker at once: see handOver. */
const HAND_OVER_BYTES = 1024 * 1024;

/**
 * Passes the body's chunks to the worker in pieces of HAND_OVER_BYTES, each gathered into a buffer
 * of its own and transferred, not cloned: posting each 64 KiB socket chunk (a thousand for 64 MiB)
 * cloned every one and held /healthz ~100 ms at a time while a large body arrived. `undefined`
 * sends what is left.
 */
function handOver(worker: Worker): (chunk: Buffer | undefined) => void {
  let pending: Buffer[] = [];
  let size = 0;
  return (chunk) => {
    if (chunk !== undefined) {
      pending.push(chunk);
      size += chunk.length;
      if (size < HAND_OVER_BYTES) return;
    }
    if (size === 0) return;
    // Buffer.concat of this size allocates an ArrayBuffer of its own (never the shared pool).
    const piece = Buffer.concat(pending, size);
    worker.postMessage(piece, [piece.buffer]);
    pending = [];
    size = 0;
  };
}

/**
 * `maxBytes`: the largest body (IMPORT_MAX_BYTES); more is 413. `checkpoint` (tests only) pauses
 * at `import:slot` once a queued task holds the slot.
 */
export function createImportRunner(maxBytes: number, checkpoint?: (step: string) => Promise<void>): ImportRunner {
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

  const read = async <T>(
    body: Readable,
    length: number | undefined,
    write: (document: ImportDocument) => Promise<T>,
    holding: boolean,
  ): Promise<T> => {
    if (length !== undefined && length > maxBytes) throw tooLarge();
    const reader = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    const first = await head(reader, maxBytes);
    if (first.ended) {
      const checked = readImport(Buffer.concat(first.chunks));
      return write(documentOf(checked.notes, checked.folders, checked.attachments));
    }
    if (!holding) await acquire();
    let worker: Worker | undefined;
    try {
      worker = spawnWorker(length, heapMb);
      workers.add(worker);
      const next = messagesOf(worker);
      // Each chunk is copied to the worker (tens of kilobytes at a time), which assembles the document.
      const send = handOver(worker);
      for (const chunk of first.chunks) send(chunk);
      let bytes = first.bytes;
      for (let chunk = await reader.next(); chunk.done !== true; chunk = await reader.next()) {
        bytes += chunk.value.length;
        if (bytes > maxBytes) throw tooLarge();
        send(chunk.value);
      }
      send(undefined);
      worker.postMessage('end');
      const ready = await next();
      if (ready.type === 'invalid') throw Errors.relayed(ready);
      if (ready.type !== 'ready') throw new Error(`import worker: unexpected ${ready.type}`);
      const w = worker;
      // One batch is always on its way while the one before is written: the worker runs at a lower
      // priority, and waiting for it after every batch made a busy machine's imports several times slower.
      const batches = async function* () {
        w.postMessage('next');
        for (;;) {
          const message = await next();
          if (message.type === 'done') return;
          if (message.type !== 'batch') throw new Error(`import worker: unexpected ${message.type}`);
          w.postMessage('next');
          yield message.items;
        }
      };
      return await write({ ...ready.summary, batches: batches() });
    } finally {
      if (worker !== undefined) {
        workers.delete(worker);
        await worker.terminate();
      }
      if (!holding) release();
    }
  };

  return {
    run: (body, length, write) => read(body, length, write, false),
    async queued(task) {
      await acquire();
      try {
        await checkpoint?.('import:slot');
        return await task((body, length, write) => read(body, length, write, true));
      } finally {
        release();
      }
    },
    async close() {
      await Promise.all([...workers].map((w) => w.terminate()));
    },
  };
}
