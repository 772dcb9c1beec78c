import type { Kysely } from 'kysely';
import type { DatabaseConfig } from '../config.js';
import { openPostgresKysely } from './postgres.js';
import type { Tables } from './schema.js';
import { openSqliteKysely, sqliteReleased } from './sqlite.js';

export interface Database {
  readonly db: Kysely<Tables>;
  readonly kind: DatabaseConfig['kind'];
  /** Connection counts of the PostgreSQL pool (absent on SQLite). */
  readonly poolStats?: () => { total: number; idle: number; waiting: number };
  close(): Promise<void>;
  /**
   * Ends the work still running without a reply time-out (PostgreSQL's migrations and maintenance,
   * postgres.ts) so that close() can finish; nothing to do on SQLite. Returns how many connections it ended.
   */
  abandonUnbounded(): number;
}

interface OpenOptions {
  onPoolError?: (error: Error) => void;
}

/**
 * The dialect boundary: whichever the database, rows come back with plain values (ISO-8601 strings
 * with milliseconds for timestamps, booleans, numbers, strings for UTF-8 text stored as bytes), so
 * nothing above src/db converts. See sqlite.ts and postgres.ts.
 */
export function openDatabase(config: DatabaseConfig, options: OpenOptions = {}): Database {
  if (config.kind === 'sqlite') {
    const db = openSqliteKysely(config.filename);
    return {
      db,
      kind: 'sqlite',
      abandonUnbounded: () => 0,
      close: async () => {
        await db.destroy();
        await sqliteReleased(db);
      },
    };
  }
  const { db, pool, abandonUnbounded } = openPostgresKysely(config.url, config.poolMax, options.onPoolError, {
    ...(config.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: config.connectTimeoutMs }),
    ...(config.queryTimeoutMs === undefined ? {} : { queryTimeoutMs: config.queryTimeoutMs }),
  });
  const poolStats = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
  return { db, kind: 'postgres', poolStats, abandonUnbounded, close: () => db.destroy() };
}
