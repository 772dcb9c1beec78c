import type { Worker } from 'node:worker_threads';
import { startWorker } from '../shared/worker.js';
import { Errors } from '../errors.js';
import { diffJson } from './diff.js';
import { type MergeOutcome, mergeContent } from './merge.js';

/**
 * A diff runs inline only when it is trivially cheap whatever the texts hold: Myers' search costs
 * at most (lines of both)² comparisons, so 200 lines (and 4 KiB, for splitting and serialising)
 * bound it at well under a millisecond — less than a hand-off to a thread. Every other diff, up
 * to two 1 MiB versions, goes through the one worker's queue, so that no diff holds up the
 * requests the event loop is serving meanwhile.
 */
export const INLINE_MAX_CHARS = 4 * 1024;
export const INLINE_MAX_LINES = 200;

/**
 * The queue's bounds. Waiting texts take memory (two 1 MiB versions are 4 MB as UTF-16), so the
 * queue holds at most QUEUE_MAX_CHARS of them; and a diff that waits longer than MAX_WAIT_MS for
 * the worker would not answer within the contract's second, so it is refused then. Both refusals
 * are 503 busy with Retry-After.
 */
export const QUEUE_MAX_CHARS = 8 * 1024 * 1024;
export const MAX_WAIT_MS = 500;

export interface DiffRunner {
  /** The diff as UTF-8 JSON: `{stats, complete, hunks, unified}` (see diffJson). */
  run(from: string, to: string, context: number, header: string): Promise<Buffer>;
  /** A three-way merge of contents (merge.ts), on the same worker and queue as diffs unless trivial. */
  merge(base: string, ours: string, theirs: string): Promise<MergeOutcome>;
  close(): Promise<void>;
}

const spawnWorker = () => startWorker(import.meta.url, 'diff.worker');

function lineCount(text: string, limit: number): number {
  let lines = 1;
  for (let at = text.indexOf('\n'); at !== -1 && lines <= limit; at = text.indexOf('\n', at + 1)) lines += 1;
  return lines;
}

/** Trivial: at most INLINE_MAX_CHARS and INLINE_MAX_LINES, both texts together. */
export function isTrivial(from: string, to: string): boolean {
  if (from.length + to.length > INLINE_MAX_CHARS) return false;
  return lineCount(from, INLINE_MAX_LINES) + lineCount(to, INLINE_MAX_LINES) <= INLINE_MAX_LINES;
}

/** What the worker is sent: a diff, or with `kind: 'merge'` a merge (see diff.worker.ts). */
type Task =
  | { kind: 'diff'; from: string; to: string; context: number; header: string }
  | { kind: 'merge'; base: string; ours: string; theirs: string };

interface Job {
  id: number;
  task: Task;
  /** The texts' length, counted against QUEUE_MAX_CHARS while the job waits. */
  chars: number;
  resolve: (answer: Buffer | MergeOutcome) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout | undefined;
}

/** The queue's bounds, QUEUE_MAX_CHARS and MAX_WAIT_MS unless a test sets others. */
export interface QueueLimits {
  maxChars: number;
  maxWaitMs: number;
}

export function createDiffRunner(
  limits: QueueLimits = { maxChars: QUEUE_MAX_CHARS, maxWaitMs: MAX_WAIT_MS },
): DiffRunner {
  let worker: Worker | undefined;
  let nextId = 0;
  // One job at a time on the worker; the others wait here, in order, so that their wait can be bounded.
  let running: Job | undefined;
  const waiting: Job[] = [];
  let waitingChars = 0;

  const leave = (job: Job) => {
    clearTimeout(job.timer);
    waitingChars -= job.chars;
  };
  const failAll = (error: Error) => {
    running?.reject(error);
    running = undefined;
    for (const job of waiting.splice(0)) leave(job), job.reject(error);
    worker = undefined;
  };
  const start = () => {
    const w = spawnWorker();
    w.unref();
    w.on('message', (message: { id: number; bytes?: Uint8Array; outcome?: MergeOutcome; error?: string }) => {
      const job = running;
      if (job === undefined || job.id !== message.id) return;
      running = undefined;
      const bytes = message.bytes;
      if (bytes !== undefined) job.resolve(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      else if (message.outcome !== undefined) job.resolve(message.outcome);
      else job.reject(new Error(`diff worker: ${message.error}`));
      next();
    });
    // A crashed worker fails its jobs (500) and is replaced by the next diff.
    w.on('error', (error) => failAll(error));
    w.on('exit', (code) => {
      if (worker === w) failAll(new Error(`diff worker exited with code ${code}`));
    });
    return w;
  };
  const next = () => {
    if (running !== undefined) return;
    const job = waiting.shift();
    if (job === undefined) return;
    leave(job);
    running = job;
    worker ??= start();
    worker.postMessage({ id: job.id, ...job.task });
  };
  const enqueue = (task: Task, chars: number) => {
    if (waitingChars + chars > limits.maxChars) return Promise.reject(Errors.busy(1));
    return new Promise<Buffer | MergeOutcome>((resolve, reject) => {
      const job: Job = { id: nextId++, task, chars, resolve, reject, timer: undefined };
      job.timer = setTimeout(() => {
        const at = waiting.indexOf(job);
        if (at === -1) return;
        waiting.splice(at, 1);
        leave(job);
        reject(Errors.busy(1));
      }, limits.maxWaitMs);
      waiting.push(job);
      waitingChars += chars;
      next();
    });
  };

  return {
    run(from, to, context, header) {
      if (isTrivial(from, to)) return Promise.resolve(Buffer.from(diffJson(from, to, context, header)));
      return enqueue({ kind: 'diff', from, to, context, header }, from.length + to.length) as Promise<Buffer>;
    },
    merge(base, ours, theirs) {
      // Trivial when the two sides together are (a merge's searches compare base with each side).
      if (isTrivial(base + ours, theirs)) return Promise.resolve(mergeContent(base, ours, theirs));
      return enqueue(
        { kind: 'merge', base, ours, theirs },
        base.length + ours.length + theirs.length,
      ) as Promise<MergeOutcome>;
    },
    async close() {
      const w = worker;
      failAll(new Error('diff runner closed'));
      if (w !== undefined) await w.terminate();
    },
  };
}
