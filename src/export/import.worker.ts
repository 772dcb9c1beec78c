import { parentPort, workerData } from 'node:worker_threads';
import { AppError } from '../errors.js';
import { lowerOwnThreadPriority } from '../ops/thread-priority.js';
import { importBatches, readImport, summarise, type ImportItem, type ImportSummary } from './import.read.js';

/** What the worker answers: first `ready` or `invalid`, then one `batch` per `next` until `done`. */
export type ImportWorkerMessage =
  | { type: 'ready'; summary: ImportSummary }
  | { type: 'invalid'; status: number; code: string; detail: string }
  | { type: 'batch'; items: ImportItem[] }
  | { type: 'done' };

lowerOwnThreadPriority();

/**
 * Reads one import document off the event loop: its bytes arrive in chunks (then 'end'), and the
 * UTF-8 check, the counts, JSON.parse and validation run here. Then it holds the checked notes and
 * gives them out a batch at a time (one per 'next') while the event loop's thread writes them.
 */
const port = parentPort!;
const { length } = workerData as { length: number | undefined };
let bytes = Buffer.allocUnsafe(length ?? 1024 * 1024);
let used = 0;
let batches: Generator<ImportItem[]> | undefined;

function append(chunk: Uint8Array): void {
  if (used + chunk.length > bytes.length) {
    const grown = Buffer.allocUnsafe(Math.max(2 * bytes.length, used + chunk.length));
    bytes.copy(grown, 0, 0, used);
    bytes = grown;
  }
  bytes.set(chunk, used);
  used += chunk.length;
}

function read(): void {
  try {
    const checked = readImport(bytes.subarray(0, used));
    bytes = Buffer.alloc(0); // the bytes are not needed once parsed
    batches = importBatches(checked.notes);
    port.postMessage({ type: 'ready', summary: summarise(checked) } satisfies ImportWorkerMessage);
  } catch (error) {
    if (!(error instanceof AppError)) throw error; // the worker's 'error' event: a 500, logged
    port.postMessage({
      type: 'invalid',
      status: error.status,
      code: error.code,
      detail: error.detail,
    } satisfies ImportWorkerMessage);
  }
}

port.on('message', (message: Uint8Array | 'end' | 'next') => {
  if (message === 'end') return read();
  if (message === 'next') {
    // after 'done', another 'next' answers 'done' again
    const next = batches!.next();
    return port.postMessage(
      (next.done ? { type: 'done' } : { type: 'batch', items: next.value }) satisfies ImportWorkerMessage,
    );
  }
  append(message);
});
