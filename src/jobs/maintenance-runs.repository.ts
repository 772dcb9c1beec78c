import { sql } from 'kysely';
import type { Db } from '../db/schema.js';

/**
 * maintenance_runs: one row per task, when it last started and what it did. Written only by the
 * maintenance runner (jobs/maintenance.ts). Raw SQL over a table the row types do not list: nothing
 * else reads it.
 */

/**
 * Claims a run of `task` at `now`: sets last_run_at to `now` if it never ran, or (with `notSince`)
 * only if it last started at or before `notSince`, or (with `unfinishedBefore`) if its last run
 * started before that instant and never recorded a summary: it was interrupted (kill -9, power
 * loss) and nothing is running it now. One conditional UPDATE, so of several instances claiming at
 * once exactly one wins, on PostgreSQL and on a SQLite file shared by workers. A claim clears the
 * summary until the run records its own. Returns the previous start time on success (to give the
 * claim back if the run fails).
 */
export async function claimRun(
  db: Db,
  task: string,
  now: Date,
  notSince?: Date,
  unfinishedBefore?: Date,
): Promise<{ claimed: true; previous: string | null } | { claimed: false; lastRunAt: string }> {
  await sql`insert into maintenance_runs (task, last_run_at) values (${task}, null) on conflict (task) do nothing`.execute(
    db,
  );
  const before = await sql<{
    last_run_at: string | null;
  }>`select last_run_at from maintenance_runs where task = ${task}`.execute(db);
  const previous = before.rows[0]?.last_run_at ?? null;
  // An instant no run starts before: without `unfinishedBefore`, no run counts as interrupted.
  const interrupted = (unfinishedBefore ?? new Date(0)).toISOString();
  const result =
    notSince === undefined
      ? await sql`update maintenance_runs set last_run_at = ${now.toISOString()}, last_summary = null
        where task = ${task}`.execute(db)
      : await sql`update maintenance_runs set last_run_at = ${now.toISOString()}, last_summary = null
        where task = ${task} and (last_run_at is null or last_run_at <= ${notSince.toISOString()}
          or (last_summary is null and last_run_at < ${interrupted}))`.execute(db);
  if (Number(result.numAffectedRows ?? 0n) > 0) return { claimed: true, previous };
  const current = await sql<{
    last_run_at: string;
  }>`select last_run_at from maintenance_runs where task = ${task}`.execute(db);
  return { claimed: false, lastRunAt: current.rows[0]?.last_run_at ?? '' };
}

/** After a failed run: the claim goes back, so the next tick (here or elsewhere) tries again. */
export async function releaseRun(db: Db, task: string, claimedAt: Date, previous: string | null): Promise<void> {
  await sql`update maintenance_runs set last_run_at = ${previous} where task = ${task} and last_run_at = ${claimedAt.toISOString()}`.execute(
    db,
  );
}

export async function recordSummary(db: Db, task: string, summary: string): Promise<void> {
  await sql`update maintenance_runs set last_summary = ${summary} where task = ${task}`.execute(db);
}
