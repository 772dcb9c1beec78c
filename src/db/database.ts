import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type SqliteDatabase } from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from '../config.js';
import type { Tables } from './schema.js';
import { SqliteBooleanPlugin } from './sqlite-boolean-plugin.js';

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

export function openDatabase(config: DatabaseConfig, options: OpenOptions = {}): Database {
  return config.kind === 'sqlite' ? openSqlite(config.filename) : openPostgres(config.url, config.poolMax, options);
}

function openSqlite(filename: string): Database {
  if (filename !== ':memory:') fs.mkdirSync(path.dirname(filename), { recursive: true });
  const sqlite = new BetterSqlite3(filename);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  // Several workers may share one file; wait for the write lock instead of failing at once.
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<Tables>({
    dialect: new SqliteDialect({ database: withStatementCache(sqlite) }),
    plugins: [new SqliteBooleanPlugin()],
  });
  return { db, kind: 'sqlite', close: () => db.destroy() };
}

/** Distinct SQL texts kept prepared; the app has a few dozen, IN-lists of different lengths add some. */
const STATEMENT_CACHE_SIZE = 256;

/**
 * Kysely's SQLite driver prepares every query afresh, and parsing and planning the SQL was about a
 * tenth of the server's CPU on a note read (see BENCHMARKS.md). A prepared statement can be run any
 * number of times, so keep the most recently used ones by their SQL text. One still iterating (a
 * streamed query) is busy and not shared: that query gets a statement of its own.
 */
function withStatementCache(sqlite: BetterSqlite3.Database): SqliteDatabase {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql) {
      const cached = cache.get(sql);
      if (cached !== undefined && !cached.busy) {
        cache.delete(sql); // most recently used goes last
        cache.set(sql, cached);
        return cached;
      }
      const statement = sqlite.prepare(sql);
      if (cached === undefined) {
        cache.set(sql, statement);
        if (cache.size > STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      }
      return statement;
    },
  };
}

function openPostgres(url: string, max: number, options: OpenOptions): Database {
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 30_000 });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', (error) => options.onPoolError?.(error));
  // The pool only listens for errors of idle clients. A connection lost while a client is checked
  // out (mid-query) emits 'error' on the client too, and with no listener that crashed the process;
  // the query itself fails with the same error (answered as 503) and the pool drops the client on
  // release, so there is nothing more to do here.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  const poolStats = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
  return { db, kind: 'postgres', poolStats, close: () => db.destroy() };
}
