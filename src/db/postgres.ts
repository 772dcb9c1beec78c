import { CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Tables } from './schema.js';
import { statementName } from './statements.js';

/**
 * PostgreSQL's side of the dialect boundary: type parsers turn values into what SQLite gives (see
 * sqlite.ts), so repositories and services never convert. Booleans already arrive as booleans.
 */
const BYTEA = 17;
const INT8 = 20;
const TIMESTAMPTZ = 1184;

/** The app's timestamp format, Date.prototype.toISOString's: `2026-11-22T23:14:45.120Z`. */
export function parseTimestamptz(text: string): string {
  // The session runs in UTC (set on connect), so values read `2026-11-22 23:14:45.12+00`: the
  // fraction drops trailing zeros and is absent at .000.
  if (text.length >= 22 && text.endsWith('+00') && text.charCodeAt(10) === 32 /* space */ && text.length <= 29) {
    const fraction = text.length > 22 ? text.slice(20, text.length - 3) : '';
    return `${text.slice(0, 10)}T${text.slice(11, 19)}.${(fraction + '000').slice(0, 3)}Z`;
  }
  const date = pg.types.getTypeParser(TIMESTAMPTZ, 'text')(text) as Date;
  return date.toISOString();
}

/** bigint as a number while it is exact (sequence numbers, counts), else as its decimal string. */
export function parseInt8(text: string): number | string {
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : text;
}

/** Bytes columns hold UTF-8 text (PostgreSQL text cannot hold NUL); text format is `\x` + hex. */
export function parseBytea(text: string): string {
  return text.startsWith('\\x')
    ? Buffer.from(text.slice(2), 'hex').toString('utf8')
    : (pg.types.getTypeParser(BYTEA, 'text')(text) as Buffer).toString('utf8');
}

const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (format === undefined || format === 'text') {
      if (oid === TIMESTAMPTZ) return parseTimestamptz;
      if (oid === INT8) return parseInt8;
      if (oid === BYTEA) return parseBytea;
    }
    return pg.types.getTypeParser(oid, format as 'text');
  },
} as pg.CustomTypesConfig;

/**
 * Queries compiled once (compiled.ts) run as named prepared statements: PostgreSQL parses and plans
 * them once per connection instead of on every call. Anything else goes as before.
 */
class Client extends pg.Client {
  override query(config: unknown, values?: unknown, callback?: unknown): any {
    if (typeof config === 'string' && Array.isArray(values) && callback === undefined) {
      const name = statementName(config);
      if (name !== undefined) return super.query({ name, text: config, values });
    }
    return (super.query as (...args: unknown[]) => unknown)(config, values, callback);
  }
}

export interface PostgresHandle {
  db: Kysely<Tables>;
  pool: pg.Pool;
}

export function openPostgresKysely(url: string, max: number, onPoolError?: (error: Error) => void): PostgresHandle {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    types,
    Client,
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', (error) => onPoolError?.(error));
  // The pool only listens for errors of idle clients. A connection lost while a client is checked
  // out (mid-query) emits 'error' on the client too, and with no listener that crashed the process;
  // the query itself fails with the same error (answered as 503) and the pool drops the client on
  // release, so there is nothing more to do here.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Tables>({
    dialect: new PostgresDialect({
      pool,
      // Timestamps then arrive in UTC, the fast path of parseTimestamptz.
      onCreateConnection: async (connection) => {
        await connection.executeQuery(CompiledQuery.raw('set time zone utc'));
      },
    }),
  });
  return { db, pool };
}
