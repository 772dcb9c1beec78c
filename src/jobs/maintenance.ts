import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../db/database.js';
import { sameEffectsAs } from '../db/effects.js';
import type { Db } from '../db/schema.js';
import { claimRun, recordSummary, releaseRun } from './maintenance-runs.repository.js';

/**
 * One kind of housekeeping (history retention, trash purge, audit retention, dead tokens). A task
 * owns its transactions: it gets a handle, not a transaction, so it can work in batches.
 */
export interface MaintenanceTask {
  /** Stable and unique: it names the task in logs and the CLI and keys its lock on PostgreSQL. */
  readonly name: string;
  /** One pass at time `now`; returns counts of what it did (e.g. `{ versions: 12 }`). */
  run(db: Db, now: Date): Promise<Record<string, number>>;
  /** What the counts mean, for logs and the CLI ("purged 3 notes from the trash"). */
  describe?(counts: Record<string, number>): string;
  /** Fills in what an upgrade left missing (old notes' tags): reported by /readyz while it runs. */
  readonly backfill?: boolean;
  /**
   * Run instead of `run` every CATCH_UP_DEFAULTS.everyMs for a while after start-up, under the same
   * name (and lock): a back-fill of what the previous release's replicas still write during a
   * rolling upgrade. Only for a cheap look.
   */
  catchUp?(db: Db, now: Date): Promise<Record<string, number>>;
}

export type TaskOutcome =
  | { task: string; status: 'done'; counts: Record<string, number>; summary: string }
  /** Running right now, in this process or (PostgreSQL) another instance. */
  | { task: string; status: 'skipped' }
  /** Ran within the interval (here or on another instance): `lastRunAt` says when. */
  | { task: string; status: 'not-due'; lastRunAt: string }
  | { task: string; status: 'failed'; error: unknown };

export function describeCounts(task: MaintenanceTask, counts: Record<string, number>): string {
  if (task.describe !== undefined) return task.describe(counts);
  const parts = Object.entries(counts).map(([what, n]) => `${what}: ${n}`);
  return parts.length === 0 ? 'nothing to do' : parts.join(', ');
}

export interface RunOptions {
  /**
   * Scheduled runs: run only if the task last started at least this long ago on any instance
   * (maintenance_runs). Without it (the CLI) the task runs now regardless; either way the run is
   * recorded.
   */
  everyMs?: number;
  /**
   * A back-fill claimed before this instant that never finished was interrupted (the process
   * killed, the machine lost): it is due now, not an interval later. The start of the scheduler,
   * so a run another process of the same start is doing is not taken for one.
   */
  unfinishedBefore?: Date;
  /**
   * Tests only (TEST_PAUSE_AT): `maintenance:TASK:unbounded`, once its statements have no time-out
   * (PostgreSQL), and `maintenance:TASK:claimed`, once its run is claimed.
   */
  pause?: (point: string) => Promise<void>;
}

export const MAINTENANCE_INTERVAL_MS = 60 * 60 * 1000;

/**
 * After start-up the catch-up tasks (the tags back-fill) run again this often for a while: during a
 * rolling upgrade the replicas of the previous release keep writing after this one migrated: the
 * notes they create have no tags, the versions they save leave the tags of the version before, and
 * their trash and restore leave the tag rows as they were. With nothing to do a run is two small
 * queries; the window covers a rolling upgrade of any reasonable length, and the hourly pass
 * settles whatever a longer one leaves.
 */
export const CATCH_UP_DEFAULTS = { everyMs: 15_000, forMs: 30 * 60 * 1000 } as const;
/** Timers fire a little late or early against another instance's clock; a tick this close to due counts as due. */
const CLAIM_SLACK_MS = 5_000;

/** Advisory-lock keys share one class so they cannot collide with locks taken for other reasons. */
const LOCK_CLASS = 0x56_4c_4d; // "VLM"

function lockKey(name: string): number {
  return createHash('sha256').update(name).digest().readInt32BE(0);
}

/** Outcomes of scheduled runs in this process, by task and status (/metrics: vellum_maintenance_runs_total). */
export const maintenanceOutcomes = new Map<string, number>();

/** Tasks running on each database handle; a second call for the same task skips rather than doubles up. */
const runningByDatabase = new WeakMap<Database, Set<string>>();

/**
 * Runs one task once. On PostgreSQL, several instances share the database, so the task runs under
 * a session advisory lock held on one pooled connection: an instance that finds it taken skips
 * (another is doing the same work right now). SQLite is one machine's file; an in-process guard is
 * enough against overlap, and holding its single connection for the whole task would stall every
 * request. On both, the claim in maintenance_runs makes a scheduled run happen once per interval
 * across every instance and worker; a failed run gives its claim back.
 */
export async function runTask(
  database: Database,
  task: MaintenanceTask,
  now: Date,
  options: RunOptions = {},
): Promise<TaskOutcome> {
  const { pause } = options;
  let running = runningByDatabase.get(database);
  if (running === undefined) runningByDatabase.set(database, (running = new Set()));
  if (running.has(task.name)) return { task: task.name, status: 'skipped' };
  running.add(task.name);
  try {
    if (database.kind === 'sqlite') return await claimAndRun(database.db, task, now, options);
    return await database.db.connection().execute(async (conn) => {
      // Changes the task makes on this connection are told as any other (db/effects.ts).
      sameEffectsAs(conn, database.db);
      const key = lockKey(task.name);
      const { rows } = await sql<{
        locked: boolean;
      }>`select pg_try_advisory_lock(${LOCK_CLASS}, ${key}) as locked`.execute(conn);
      if (rows[0]?.locked !== true) return { task: task.name, status: 'skipped' } as const;
      try {
        // Housekeeping may rightly run long (a VACUUM of a large table): no DATABASE_QUERY_TIMEOUT_SECONDS.
        await sql.raw('set statement_timeout = 0').execute(conn);
        await pause?.(`maintenance:${task.name}:unbounded`);
        return await claimAndRun(conn, task, now, options);
      } finally {
        await sql.raw('reset statement_timeout').execute(conn);
        await sql`select pg_advisory_unlock(${LOCK_CLASS}, ${key})`.execute(conn);
      }
    });
  } catch (error) {
    return { task: task.name, status: 'failed', error };
  } finally {
    running.delete(task.name);
  }
}

async function claimAndRun(
  db: Db,
  task: MaintenanceTask,
  now: Date,
  { everyMs, unfinishedBefore, pause }: RunOptions,
): Promise<TaskOutcome> {
  const claim = await claimRun(
    db,
    task.name,
    now,
    everyMs === undefined ? undefined : new Date(now.getTime() - everyMs + CLAIM_SLACK_MS),
    task.backfill === true ? unfinishedBefore : undefined,
  );
  if (!claim.claimed) return { task: task.name, status: 'not-due', lastRunAt: claim.lastRunAt };
  await pause?.(`maintenance:${task.name}:claimed`);
  let counts: Record<string, number>;
  try {
    counts = await task.run(db, now);
  } catch (error) {
    await releaseRun(db, task.name, now, claim.previous).catch(() => {});
    throw error;
  }
  const summary = describeCounts(task, counts);
  await recordSummary(db, task.name, summary);
  return { task: task.name, status: 'done', counts, summary };
}

/** Runs every task once, one after another; one failing task does not stop the others. */
export async function runTasks(
  database: Database,
  tasks: readonly MaintenanceTask[],
  now: Date,
  options: RunOptions = {},
): Promise<TaskOutcome[]> {
  const outcomes: TaskOutcome[] = [];
  for (const task of tasks) outcomes.push(await runTask(database, task, now, options));
  return outcomes;
}

export interface MaintenanceOptions {
  database: Database;
  tasks: readonly MaintenanceTask[];
  log: FastifyBaseLogger;
  intervalMs?: number;
  /** Injected by tests; the wall clock otherwise. */
  clock?: () => Date;
  /** Tests only (TEST_PAUSE_AT): called with `maintenance:TASK` before each task runs. */
  pause?: (point: string) => Promise<void>;
  /** The back-fills' catch-up after start-up (CATCH_UP_DEFAULTS); tests shorten it. */
  catchUp?: { everyMs: number; forMs: number };
}

export interface Maintenance {
  /** Resolves when the pass in progress (if any) has finished; no pass starts afterwards. */
  stop(): Promise<void>;
  /** The pass started at start-up or by the latest tick, for tests and shutdown. */
  readonly current: Promise<void>;
  /** The back-fill this process is running now, if any (reported by /readyz). */
  running(): readonly string[];
  /** Runs a catch-up pass now, after the pass in progress: what the timer does, for tests. */
  catchUpNow(): Promise<void>;
}

/**
 * Ticks at start-up and then every interval; each tick runs the tasks that no instance has run
 * within the interval (maintenance_runs), so N instances or workers still make one pass per
 * interval, and a restart does not repeat a pass that just happened. The timer does not keep the
 * process alive, and a pass that is still running when the next tick comes is not overlapped.
 */
export function startMaintenance({
  database,
  tasks,
  log,
  intervalMs = MAINTENANCE_INTERVAL_MS,
  clock = () => new Date(),
  pause,
  catchUp = CATCH_UP_DEFAULTS,
}: MaintenanceOptions): Maintenance {
  let stopped = false;
  const startedAt = clock();
  let runningTask: string | undefined;
  let current: Promise<void> = Promise.resolve();
  let busy = false;
  const pass = async (which: readonly MaintenanceTask[], catchingUp: boolean) => {
    for (const task of which) {
      runningTask = task.backfill === true ? task.name : undefined;
      let outcome: TaskOutcome;
      try {
        await pause?.(`maintenance:${task.name}`);
        const now = clock();
        if (catchingUp && task.catchUp !== undefined) {
          // A catch-up run is due whenever it comes: it only looks for what older replicas left.
          outcome = await runTask(database, { ...task, run: task.catchUp.bind(task) }, now, { pause });
        } else
          outcome = await runTask(database, task, now, { everyMs: intervalMs, unfinishedBefore: startedAt, pause });
      } finally {
        runningTask = undefined;
      }
      const key = `${outcome.task}\t${outcome.status}`;
      maintenanceOutcomes.set(key, (maintenanceOutcomes.get(key) ?? 0) + 1);
      if (outcome.status === 'failed')
        log.error({ err: outcome.error, task: outcome.task }, `maintenance ${outcome.task} failed`);
      else if (outcome.status === 'done' && catchingUp && Object.values(outcome.counts).every((n) => n === 0))
        log.debug({ task: outcome.task }, `maintenance ${outcome.task}: nothing left by older replicas`);
      else if (outcome.status === 'done')
        log.info({ task: outcome.task, ...outcome.counts }, `maintenance ${outcome.task}: ${outcome.summary}`);
      else if (outcome.status === 'not-due')
        log.debug(
          { task: outcome.task, lastRunAt: outcome.lastRunAt },
          `maintenance ${outcome.task}: not due, last run ${outcome.lastRunAt}`,
        );
      else log.debug({ task: outcome.task }, `maintenance ${outcome.task}: skipped, running elsewhere`);
    }
  };
  const tick = (catchingUp = false) => {
    if (stopped || busy) return;
    busy = true;
    current = pass(catchingUp ? backfills : tasks, catchingUp).finally(() => {
      busy = false;
    });
  };
  const backfills = tasks.filter((task) => task.catchUp !== undefined);
  tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  const catchUpTimer = backfills.length === 0 ? undefined : setInterval(() => tick(true), catchUp.everyMs).unref();
  const catchUpEnd = setTimeout(() => clearInterval(catchUpTimer), catchUp.forMs).unref();
  return {
    get current() {
      return current;
    },
    running: () => (runningTask === undefined ? [] : [runningTask]),
    async catchUpNow() {
      while (busy) await current;
      tick(true);
      await current;
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      clearInterval(catchUpTimer);
      clearTimeout(catchUpEnd);
      await current;
    },
  };
}
