import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../db/database.js';
import type { Db } from '../db/schema.js';

/**
 * One kind of housekeeping (history retention, trash purge, audit retention, dead tokens). A task
 * owns its transactions: it gets a handle, not a transaction, so it can work in batches.
 */
export interface MaintenanceTask {
  /** Stable and unique: it names the task in logs and the CLI and keys its lock on PostgreSQL. */
  readonly name: string;
  /** One pass at time `now`; returns counts of what it deleted (e.g. `{ versions: 12 }`). */
  run(db: Db, now: Date): Promise<Record<string, number>>;
}

export type TaskOutcome =
  | { task: string; status: 'done'; counts: Record<string, number> }
  | { task: string; status: 'skipped' }
  | { task: string; status: 'failed'; error: unknown };

export const MAINTENANCE_INTERVAL_MS = 60 * 60 * 1000;

/** Advisory-lock keys share one class so they cannot collide with locks taken for other reasons. */
const LOCK_CLASS = 0x56_4c_4d; // "VLM"

function lockKey(name: string): number {
  return createHash('sha256').update(name).digest().readInt32BE(0);
}

/** Tasks running on each database handle; a second call for the same task skips rather than doubles up. */
const runningByDatabase = new WeakMap<Database, Set<string>>();

/**
 * Runs one task once. On PostgreSQL, several instances share the database, so the task runs under
 * a session advisory lock held on one pooled connection: an instance that finds it taken skips
 * (another is doing the same work right now). SQLite is one machine's file; an in-process guard is
 * enough, and holding its single connection for the whole task would stall every request.
 */
export async function runTask(database: Database, task: MaintenanceTask, now: Date): Promise<TaskOutcome> {
  let running = runningByDatabase.get(database);
  if (running === undefined) runningByDatabase.set(database, (running = new Set()));
  if (running.has(task.name)) return { task: task.name, status: 'skipped' };
  running.add(task.name);
  try {
    if (database.kind === 'sqlite') return { task: task.name, status: 'done', counts: await task.run(database.db, now) };
    return await database.db.connection().execute(async (conn) => {
      const key = lockKey(task.name);
      const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${LOCK_CLASS}, ${key}) as locked`.execute(conn);
      if (rows[0]?.locked !== true) return { task: task.name, status: 'skipped' } as const;
      try {
        return { task: task.name, status: 'done', counts: await task.run(conn, now) } as const;
      } finally {
        await sql`select pg_advisory_unlock(${LOCK_CLASS}, ${key})`.execute(conn);
      }
    });
  } catch (error) {
    return { task: task.name, status: 'failed', error };
  } finally {
    running.delete(task.name);
  }
}

/** Runs every task once, one after another; one failing task does not stop the others. */
export async function runTasks(database: Database, tasks: readonly MaintenanceTask[], now: Date): Promise<TaskOutcome[]> {
  const outcomes: TaskOutcome[] = [];
  for (const task of tasks) outcomes.push(await runTask(database, task, now));
  return outcomes;
}

export interface MaintenanceOptions {
  database: Database;
  tasks: readonly MaintenanceTask[];
  log: FastifyBaseLogger;
  intervalMs?: number;
  /** Injected by tests; the wall clock otherwise. */
  clock?: () => Date;
}

export interface Maintenance {
  /** Resolves when the pass in progress (if any) has finished; no pass starts afterwards. */
  stop(): Promise<void>;
  /** The pass started at start-up or by the latest tick, for tests and shutdown. */
  readonly current: Promise<void>;
}

/**
 * Runs every task at start-up and then every interval. The timer does not keep the process alive,
 * and a pass that is still running when the next tick comes is not overlapped.
 */
export function startMaintenance({ database, tasks, log, intervalMs = MAINTENANCE_INTERVAL_MS, clock = () => new Date() }: MaintenanceOptions): Maintenance {
  let stopped = false;
  let current: Promise<void> = Promise.resolve();
  let busy = false;
  const pass = async () => {
    for (const outcome of await runTasks(database, tasks, clock())) {
      if (outcome.status === 'failed') log.error({ err: outcome.error, task: outcome.task }, 'maintenance task failed');
      else if (outcome.status === 'done') log.info({ task: outcome.task, ...outcome.counts }, 'maintenance task done');
      else log.debug({ task: outcome.task }, 'maintenance task skipped: running elsewhere');
    }
  };
  const tick = () => {
    if (stopped || busy) return;
    busy = true;
    current = pass().finally(() => { busy = false; });
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return {
    get current() {
      return current;
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await current;
    },
  };
}
