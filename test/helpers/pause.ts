import { after, before } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { buildApp } from '../../src/app.js';
import type { TestContext } from './harness.js';

/** Pauses the first arrival at `step` until released; `reached` resolves once it is held there. */
export function pauseAt() {
  let step: string | undefined;
  let reached!: () => void;
  let release!: () => void;
  let reachedP = Promise.resolve();
  let hold = Promise.resolve();
  return {
    arm(name: string) {
      step = name;
      reachedP = new Promise((r) => {
        reached = r;
      });
      hold = new Promise((r) => {
        release = r;
      });
      return { reached: reachedP, release: () => release() };
    },
    checkpoint: async (name: string) => {
      if (name !== step) return;
      step = undefined;
      reached();
      await hold;
    },
  };
}

/**
 * Whether `request`, sent while a transaction paused at a named step holds a lock, is queued behind
 * it rather than answered. PostgreSQL: polls until a backend of this test's database waits on a lock
 * that a transaction sitting idle holds — the paused one (true) — or the request answers (false).
 * Only such a wait counts: two commits that each sent a NOTIFY (live events) queue on PostgreSQL's
 * notification lock for an instant, and a note create once counted as queued for that on a busy
 * machine. SQLite cannot be asked: the held transaction owns the only
 * connection, so any query would queue behind it too; everything that touches the database after
 * the hold waits for its commit by construction, and this answers true without looking.
 */
export async function queuedBehindLock(ctx: TestContext, request: Promise<unknown>): Promise<boolean> {
  if (ctx.kind === 'sqlite') return true;
  let answered = false;
  void request.then(
    () => {
      answered = true;
    },
    () => {
      answered = true;
    },
  );
  // A cap, not a delay: a request that neither answers nor waits within it counts as not queued.
  const deadline = Date.now() + 10_000;
  while (!answered && Date.now() < deadline) {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_stat_activity waiting
      where waiting.datname = current_database() and waiting.wait_event_type = 'Lock'
        and exists (select 1 from pg_stat_activity holder
          where holder.pid = any(pg_blocking_pids(waiting.pid)) and holder.state = 'idle in transaction')
    `.execute(ctx.database.db);
    if (rows[0]!.n > 0) return true;
  }
  return false;
}

/** An app on ctx's database that pauses at named steps (buildApp's checkpoint option). */
export function racedApp(ctx: TestContext) {
  const pause = pauseAt();
  const handle = { pause, app: undefined as unknown as FastifyInstance };
  before(async () => {
    handle.app = await buildApp({
      config: ctx.config,
      database: ctx.database,
      logger: false,
      checkpoint: pause.checkpoint,
    });
    await handle.app.ready();
  });
  after(async () => handle.app.close());
  return handle;
}
