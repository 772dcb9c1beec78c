import type { FastifyPluginAsync } from 'fastify';
import { sql } from 'kysely';
import type { Database } from '../db/database.js';
import { latestMigration } from '../db/migrate.js';
import { problem, sendProblem } from '../http/problem.js';

/**
 * /healthz: the process answers. /readyz: it can serve traffic — the database answers and holds
 * every migration this build knows; a load balancer should route by this one.
 */
export const healthRoutes: FastifyPluginAsync<{ database: Database }> = async (app, { database }) => {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { hide: true } }, async (request, reply) => {
    try {
      const row = await sql<{ name: string }>`select max(name) as name from kysely_migration`.execute(database.db);
      const applied = row.rows[0]?.name ?? null;
      if (applied !== latestMigration) {
        return sendProblem(reply, problem(503, 'Database migrations are not applied', 'not_migrated'), { 'retry-after': '5' });
      }
      return { status: 'ready', migration: applied };
    } catch (error) {
      request.log.warn({ err: error }, 'readiness check failed');
      return sendProblem(reply, problem(503, 'Database unavailable', 'database_unavailable'), { 'retry-after': '5' });
    }
  });
};
