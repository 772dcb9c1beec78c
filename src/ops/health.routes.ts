import type { FastifyPluginAsync } from 'fastify';
import { sql } from 'kysely';
import type { Database } from '../db/database.js';
import { latestMigration } from '../db/migrate.js';
import type { RoutePolicy } from '../http/policy.js';
import { Errors } from '../errors.js';
import { sendError } from '../http/problem.js';

/** Load balancers ask from one address many times a minute; a 429 would take the instance out. */
const PROBE: RoutePolicy = { auth: 'public', limit: 'unlimited' };

/**
 * /healthz: the process answers. /readyz: it can serve traffic — it is not shutting down, and the
 * database answers and holds every migration this build knows; a load balancer should route by
 * this one. While the app drains (ops/graceful-close.ts) /healthz still answers 200: the process
 * is alive and finishing its work, and a supervisor must not kill it for that.
 */
export const healthRoutes: FastifyPluginAsync<{ database: Database; draining?: () => boolean }> = async (
  app,
  { database, draining = () => false },
) => {
  app.get('/healthz', { schema: { hide: true }, config: { policy: PROBE } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { hide: true }, config: { policy: PROBE } }, async (request, reply) => {
    if (draining()) return sendError(reply, Errors.shuttingDown());
    try {
      const row = await sql<{ name: string }>`select max(name) as name from kysely_migration`.execute(database.db);
      const applied = row.rows[0]?.name ?? null;
      if (applied !== latestMigration) {
        return sendError(reply, Errors.notMigrated());
      }
      return { status: 'ready', migration: applied };
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
