import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../shared/worker.js';
import { Errors } from '../errors.js';
import type { SearchQuery } from './query.js';
import type { Hit, SearchPage, SearchScope } from './search.repository.js';
import type { SearchResult } from './search.service.js';

/**
 * Search off the event loop (measured before: one query over large notes held every request for 13 s).
 * On SQLite a worker runs the whole search on a read-only connection of its own to the same file
 * (WAL: it reads while the app writes, and each search starts a read transaction, so it sees every
 * write that has answered); on PostgreSQL the ranking query runs in the database and a worker reads
 * the page's texts over a connection of its own and builds the snippets: a page of 1 MiB notes is
 * 40 MB of hex on the wire, and decoding it on the event loop held other requests for 100-350 ms.
 * Each worker takes one job at a time.
 */
export type SearchJob =
  | {
      kind: 'sqlite';
      filename: string;
      ownerId: string;
      query: SearchQuery;
      history: boolean;
      page: SearchPage;
      scope: SearchScope;
    }
  | { kind: 'postgres'; url: string; hits: Hit[]; query: SearchQuery; history: boolean };

export type SearchAnswer =
  | { id: number; results: SearchResult[] }
  | { id: number; tooExpensive: number }
  | { id: number; error: string };

/** Workers: one per core beside the event loop's, at least one (the machine this runs on has 2). */
export const WORKERS = Math.max(1, Math.min(2, availableParallelism() - 1));

/**
 * Searches waiting for a worker, at most: past it a search answers 503 busy with Retry-After, as
 * a diff does, rather than growing the queue (and a PostgreSQL page of texts held for each).
 */
export const MAX_QUEUED = 16;

export interface SearchRunner {
  run(job: SearchJob): Promise<SearchResult[]>;
  close(): Promise<void>;
}

const spawnWorker = () => startWorker(import.meta.url, 'search.worker');

interface Pending {
  id: number;
  job: SearchJob;
  resolve: (results: SearchResult[]) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  current: Pending | undefined;
}

export function createSearchRunner(workers = WORKERS): SearchRunner {
  const slots: Array<Slot | undefined> = new Array(workers).fill(undefined);
  const queue: Pending[] = [];
  let nextId = 0;
  let closed = false;

  const settle = (slot: Slot, answer: SearchAnswer) => {
    const job = slot.current;
    if (job === undefined || job.id !== answer.id) return;
    slot.current = undefined;
    if ('results' in answer) job.resolve(answer.results);
    else if ('tooExpensive' in answer) job.reject(Errors.queryTooExpensive(answer.tooExpensive / 1000));
    else job.reject(new Error(`search worker: ${answer.error}`));
    dispatch();
  };

  const start = (index: number): Slot => {
    const slot: Slot = { worker: spawnWorker(), current: undefined };
    slot.worker.unref();
    slot.worker.on('message', (answer: SearchAnswer) => settle(slot, answer));
    // A crashed worker fails its job (500) and is replaced by the next search.
    const fail = (error: Error) => {
      if (slots[index] === slot) slots[index] = undefined;
      const job = slot.current;
      slot.current = undefined;
      job?.reject(error);
      if (!closed) dispatch();
    };
    slot.worker.on('error', fail);
    slot.worker.on('exit', (code) => fail(new Error(`search worker exited with code ${code}`)));
    return slot;
  };

  const dispatch = () => {
    for (let i = 0; i < slots.length && queue.length > 0; i += 1) {
      const slot = (slots[i] ??= start(i));
      if (slot.current !== undefined) continue;
      const job = queue.shift()!;
      slot.current = job;
      slot.worker.postMessage({ id: job.id, job: job.job });
    }
  };

  return {
    run(job) {
      if (queue.length >= MAX_QUEUED) return Promise.reject(Errors.busy(1));
      return new Promise<SearchResult[]>((resolve, reject) => {
        queue.push({ id: nextId++, job, resolve, reject });
        dispatch();
      });
    },
    async close() {
      closed = true;
      const running = slots.filter((slot) => slot !== undefined);
      slots.fill(undefined);
      await Promise.all(running.map((slot) => slot.worker.terminate()));
    },
  };
}
