import type { FastifyPluginAsync } from 'fastify';
import { sql } from 'kysely';
import type { StorageHealth } from '../db/availability.js';
import type { Database } from '../db/database.js';
import { knownMigrations, latestMigration } from '../db/migrate.js';
import type { RoutePolicy } from '../http/policy.js';
import { Errors } from '../errors.js';
import { sendError } from '../http/problem.js';

/** Load balancers ask from one address many times a minute; a 429 would take the instance out. */
const PROBE: RoutePolicy = { auth: 'public', limit: 'unlimited' };

export interface HealthOptions {
  database: Database;
  draining?: () => boolean;
  /** Background work in progress (a back-fill after an upgrade): reported, not a reason to be unready. */
  background?: () => readonly string[];
  /** Set by a write that failed for want of space, cleared by one that succeeds. */
  storage?: StorageHealth;
}

/**
 * /healthz: the process answers. /readyz: it can serve traffic — it is not shutting down, and the
 * database answers and holds every migration this build knows; a load balancer should route by
 * this one. A database that also holds migrations of a newer build is ready too: migrations only
 * add, so during a rolling upgrade the old replicas keep serving after the new one migrated (they
 * used to turn 503 at once, leaving no replica ready; issue #43). While the app drains
 * (ops/graceful-close.ts) /healthz still answers 200: the process is alive and finishing its work,
 * and a supervisor must not kill it for that. Back-fills running after an upgrade are listed in
 * `background`; the service answers meanwhile (what they fill in — tags of old notes — appears as
 * they go).
 */
export const healthRoutes: FastifyPluginAsync<HealthOptions> = async (
  app,
  { database, draining = () => false, background = () => [], storage },
) => {
  app.get('/healthz', { schema: { hide: true }, config: { policy: PROBE } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { hide: true }, config: { policy: PROBE } }, async (request, reply) => {
    if (draining()) return sendError(reply, Errors.shuttingDown());
    // A balancer should send writes elsewhere while this one's disk is full.
    if (storage?.full === true) return sendError(reply, Errors.notReadyStorageFull());
    try {
      const { rows } = await withinReadinessBudget(
        sql<{ name: string }>`select name from kysely_migration`.execute(database.db),
      );
      const applied = new Set(rows.map((row) => row.name));
      if (!knownMigrations.every((name) => applied.has(name))) {
        return sendError(reply, Errors.notMigrated());
      }
      const running = background();
      return running.length === 0
        ? { status: 'ready', migration: latestMigration }
        : { status: 'ready', migration: latestMigration, background: running };
    } catch (error) {
      // A database that was never migrated has no kysely_migration table: that is "not migrated",
      // not an outage (it used to say "Database unavailable", sending operators the wrong way).
      if (isMissingTable(error)) {
        return sendError(reply, Errors.notMigrated());
      }
      request.log.warn({ err: error }, 'readiness check failed');
      return sendError(reply, Errors.databaseUnavailable('Database unavailable'));
    }
  });
};

/** "relation does not exist" on PostgreSQL (42P01), "no such table" on SQLite. */
function isMissingTable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (e === null || typeof e !== 'object') return false;
  return (
    e.code === '42P01' ||
    (e.code === 'SQLITE_ERROR' && typeof e.message === 'string' && e.message.startsWith('no such table'))
  );
}

/**
 * A balancer's probe times out after a few seconds and then counts the instance as down anyway;
 * /readyz answers 503 within this however the database behaves (a silent network used to hold it
 * for more than 7 s, issue #43). The query goes on; the pool's own time-outs end it.
 */
export const READINESS_BUDGET_MS = 1_500;

function withinReadinessBudget<T>(query: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the database did not answer within ${READINESS_BUDGET_MS} ms`)),
      READINESS_BUDGET_MS,
    );
  });
  query.catch(() => {}); // answered late, or failed after the budget: nobody waits for it any more
  return Promise.race([query, late]).finally(() => clearTimeout(timer));
}
