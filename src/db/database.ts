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
      close: async () => {
        await db.destroy();
        await sqliteReleased(db);
      },
    };
  }
  const { db, pool } = openPostgresKysely(config.url, config.poolMax, options.onPoolError, {
    ...(config.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: config.connectTimeoutMs }),
    ...(config.queryTimeoutMs === undefined ? {} : { queryTimeoutMs: config.queryTimeoutMs }),
  });
  const poolStats = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
  return { db, kind: 'postgres', poolStats, close: () => db.destroy() };
}
