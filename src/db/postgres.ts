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

const UNBOUNDED = /^\s*set\s+(local\s+)?statement_timeout\s*(=|to)\s*0\s*$/i;
const BOUNDED = /^\s*reset\s+statement_timeout\s*$/i;
/** setTimeout's largest delay (~24.8 days): "no time-out" for pg's query_timeout, where 0 means "the default". */
const NO_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * Queries compiled once (compiled.ts) run as named prepared statements: PostgreSQL parses and plans
 * them once per connection instead of on every call. Anything else goes as before.
 */
class Client extends pg.Client {
  /**
   * Set by `set [local] statement_timeout = 0` (migrations, maintenance: work that may rightly take
   * long), cleared by `reset statement_timeout` and when the pool takes the client back: its queries
   * then have no reply time-out either.
   */
  unbounded = false;

  override query(config: unknown, values?: unknown, callback?: unknown): any {
    if (typeof config === 'string') {
      if (UNBOUNDED.test(config)) this.unbounded = true;
      else if (BOUNDED.test(config)) this.unbounded = false;
    }
    if (typeof config === 'string' && (values === undefined || Array.isArray(values)) && callback === undefined) {
      const name = Array.isArray(values) ? statementName(config) : undefined;
      const timeout = this.unbounded ? { query_timeout: NO_TIMEOUT_MS } : {};
      if (name !== undefined) return this.replaceIfSilent(super.query({ name, text: config, values, ...timeout }));
      if (this.unbounded) return this.replaceIfSilent(super.query({ text: config, values, ...timeout }));
    }
    return this.replaceIfSilent((super.query as (...args: unknown[]) => unknown)(config, values, callback));
  }

  /**
   * A query with no answer within query_timeout (the network dropping packets, issue #43): pg fails
   * the query but keeps the connection, stuck behind it, and the pool handed it out again. Ending
   * the socket marks the client broken, so the pool drops it on release and opens a new one.
   */
  private replaceIfSilent<T>(result: T): T {
    if (result === null || typeof (result as { catch?: unknown }).catch !== 'function') return result;
    (result as unknown as Promise<unknown>).catch((error: unknown) => {
      if ((error as Error | undefined)?.message === 'Query read timeout') {
        (this as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
      }
    });
    return result;
  }
}

export interface PostgresHandle {
  db: Kysely<Tables>;
  pool: pg.Pool;
  /**
   * Ends the connections whose work runs without a reply time-out (`statement_timeout = 0`:
   * migrations, maintenance), so that work fails now and its connection goes back to the pool. For
   * shutdown: such a statement caught by a silent network never answers, and held the exit past
   * its deadline. Returns how many were ended.
   */
  abandonUnbounded(): number;
}

export interface PostgresTimeouts {
  connectTimeoutMs?: number;
  queryTimeoutMs?: number;
}

/** Defaults of DATABASE_CONNECT_TIMEOUT_SECONDS and DATABASE_QUERY_TIMEOUT_SECONDS. */
export const POSTGRES_TIMEOUT_DEFAULTS = { connectTimeoutMs: 5_000, queryTimeoutMs: 30_000 } as const;

/**
 * Time-outs on every connection: connecting; a statement (`statement_timeout`, PostgreSQL cancels
 * it); and a reply (`query_timeout`, a little longer: the server itself is silent — a dead network
 * — and the connection is replaced, Client above). TCP keep-alive finds a peer gone while idle.
 */
export function postgresClientOptions(timeouts: PostgresTimeouts = {}) {
  const connectTimeoutMs = timeouts.connectTimeoutMs ?? POSTGRES_TIMEOUT_DEFAULTS.connectTimeoutMs;
  const queryTimeoutMs = timeouts.queryTimeoutMs ?? POSTGRES_TIMEOUT_DEFAULTS.queryTimeoutMs;
  return {
    connectionTimeoutMillis: connectTimeoutMs,
    statement_timeout: queryTimeoutMs,
    query_timeout: queryTimeoutMs + 1_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
}

export function openPostgresKysely(
  url: string,
  max: number,
  onPoolError?: (error: Error) => void,
  timeouts: PostgresTimeouts = {},
): PostgresHandle {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    ...postgresClientOptions(timeouts),
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
  const clients = new Set<Client>();
  pool.on('connect', (client) => {
    client.on('error', () => {});
    clients.add(client as unknown as Client);
    client.once('end', () => clients.delete(client as unknown as Client));
  });
  pool.on('release', (_error: unknown, client: pg.PoolClient) => {
    (client as unknown as Client).unbounded = false;
  });
  const db = new Kysely<Tables>({
    dialect: new PostgresDialect({
      pool,
      // Timestamps then arrive in UTC, the fast path of parseTimestamptz.
      onCreateConnection: async (connection) => {
        await connection.executeQuery(CompiledQuery.raw('set time zone utc'));
      },
    }),
  });
  const abandonUnbounded = () => {
    let ended = 0;
    for (const client of clients) {
      if (!client.unbounded) continue;
      (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
      ended += 1;
    }
    return ended;
  };
  return { db, pool, abandonUnbounded };
}
