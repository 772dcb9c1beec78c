import fs from 'node:fs';
import { parentPort } from 'node:worker_threads';
import type { Kysely } from 'kysely';
import { openPostgresKysely } from '../db/postgres.js';
import { openSqliteKysely } from '../db/sqlite.js';
import type { Tables } from '../db/schema.js';
import { lowerOwnThreadPriority } from '../ops/thread-priority.js';
import { BUDGET_FUNCTION, versionTexts } from './search.repository.js';
import type { SearchAnswer, SearchJob } from './search.runner.js';
import { buildResults, searchDatabase, SEARCH_BUDGET_MS } from './search.service.js';

lowerOwnThreadPriority();

/**
 * One search at a time, off the event loop (see search.runner.ts). The time budget: better-sqlite3
 * can neither interrupt a statement nor set a progress handler, and terminating this thread takes
 * effect only once the statement returns. So the SQL calls BUDGET_FUNCTION for every row the
 * full-text index yields, and it throws once the budget is spent, which ends the statement with
 * that error. The budget is of the thread's CPU time where the system tells it (see threadCpuMs),
else of the clock. What remains unbounded by it is the work on a single row (bounded by the 1 MiB
 * content limit and the query's limits in query.ts) and a prefix's term expansion, which FTS5 does
 * before the first row.
 */
let deadline = Number.POSITIVE_INFINITY;
let cpuAtStart: number | undefined;

class BudgetSpent extends Error {}

/**
 * This thread's CPU time in milliseconds (Linux: /proc/thread-self/stat, in ticks of 10 ms), or
 * undefined elsewhere. The budget is of CPU time where it can be: this thread runs at a lower
 * priority than the event loop (and on a loaded machine behind everything else), so on the clock
 * alone a search that needs 300 ms of work could pass 2 s and be refused one time in ten.
 */
function threadCpuMs(): number | undefined {
  try {
    const stat = fs.readFileSync('/proc/thread-self/stat', 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/** True while the search is within its budget: the clock first (cheap), then the CPU time used. */
function withinBudget(): boolean {
  if (performance.now() <= deadline) return true;
  const cpu = threadCpuMs();
  if (cpu === undefined || cpuAtStart === undefined) return false;
  const left = SEARCH_BUDGET_MS - (cpu - cpuAtStart);
  if (left <= 0) return false;
  deadline = performance.now() + left;
  return true;
}

const connections = new Map<string, Kysely<Tables>>();

function connection(filename: string): Kysely<Tables> {
  let db = connections.get(filename);
  if (db === undefined) {
    db = openSqliteKysely(filename, {
      readonly: true,
      setup: (sqlite) =>
        sqlite.function(BUDGET_FUNCTION, { deterministic: false }, (_rowid: unknown) => {
          if (!withinBudget()) throw new BudgetSpent('search budget spent');
          return 1;
        }),
    });
    connections.set(filename, db);
  }
  return db;
}

/** One connection per worker: the worker reads one page of texts at a time. */
const pools = new Map<string, Kysely<Tables>>();

function postgres(url: string): Kysely<Tables> {
  let db = pools.get(url);
  if (db === undefined) {
    db = openPostgresKysely(url, 1).db;
    pools.set(url, db);
  }
  return db;
}

async function run(job: SearchJob) {
  if (job.kind === 'postgres') {
    // Versions are never changed once written: read on another connection, they are the ones found
    // (one pruned or purged meanwhile gives a snippet of its absence, as it would inline).
    const texts = await versionTexts(
      postgres(job.url),
      job.hits.map((h) => h.version_id),
    );
    return buildResults(job.hits, texts, job.query, job.history);
  }
  return searchDatabase(connection(job.filename), job.ownerId, job.query, job.history, job.page, job.scope, true);
}

parentPort!.on('message', async ({ id, job }: { id: number; job: SearchJob }) => {
  let answer: SearchAnswer;
  deadline = performance.now() + SEARCH_BUDGET_MS;
  cpuAtStart = threadCpuMs();
  try {
    answer = { id, results: await run(job) };
  } catch (error) {
    const spent = error instanceof BudgetSpent || (error instanceof Error && error.message === 'search budget spent');
    answer = spent ? { id, tooExpensive: SEARCH_BUDGET_MS } : { id, error: String(error) };
  } finally {
    deadline = Number.POSITIVE_INFINITY;
  }
  parentPort!.postMessage(answer);
});
