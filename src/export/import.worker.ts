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
 * Reads one import document (the request body, handed over rather than copied) off the event loop:
 * the UTF-8 check, the counts, JSON.parse and validation. Then it holds the checked notes and gives
 * them out a batch at a time while the event loop's thread writes them.
 */
const port = parentPort!;
const input = workerData as { body?: Uint8Array };
const body = input.body!;
input.body = undefined; // the bytes are not needed once parsed

try {
  const notes = readImport(Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  const batches = importBatches(notes);
  port.on('message', () => {
    const next = batches.next();
    port.postMessage((next.done ? { type: 'done' } : { type: 'batch', items: next.value }) satisfies ImportWorkerMessage);
  });
  port.postMessage({ type: 'ready', summary: summarise(notes) } satisfies ImportWorkerMessage);
} catch (error) {
  if (!(error instanceof AppError)) throw error; // the worker's 'error' event: a 500, logged
  port.postMessage({ type: 'invalid', status: error.status, code: error.code, detail: error.detail } satisfies ImportWorkerMessage);
}
