import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, type SqliteDatabase, type SqliteStatement } from 'kysely';
import type { Tables } from './schema.js';
import { startWorker } from '../shared/worker.js';

/**
 * SQLite's side of the dialect boundary. Rows leave here with the same plain values PostgreSQL's
 * type parsers give (see postgres.ts): booleans as booleans, UTF-8 text stored as bytes as strings.
 * Timestamps are stored as the app's ISO strings already. Parameters going in have booleans bound
 * as 0/1, which better-sqlite3 cannot bind itself.
 */
export interface SqliteOptions {
  /** A reader beside the app's own connection (the search worker): WAL lets it read while that one writes. */
  readonly?: boolean;
  /** Called with the raw connection before use (to add SQL functions). */
  setup?: (sqlite: BetterSqlite3.Database) => void;
}

export function openSqliteKysely(filename: string, options: SqliteOptions = {}): Kysely<Tables> {
  const readonly = options.readonly ?? false;
  if (filename !== ':memory:' && !readonly) fs.mkdirSync(path.dirname(filename), { recursive: true });
  const sqlite = new BetterSqlite3(filename, { readonly });
  // Several workers may share one file; wait for the write lock instead of failing at once.
  sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  if (!readonly) {
    enableWal(sqlite);
    sqlite.pragma('synchronous = NORMAL');
  }
  sqlite.pragma('foreign_keys = ON');
  options.setup?.(sqlite);
  const checkpointer = readonly || filename === ':memory:' ? undefined : startCheckpointer(sqlite, filename);
  const db = new Kysely<Tables>({
    dialect: new SqliteDialect({ database: withStatementCache(sqlite, () => checkpointer?.stop()) }),
  });
  if (checkpointer !== undefined) checkpointers.set(db, checkpointer);
  return db;
}

const checkpointers = new WeakMap<Kysely<Tables>, Checkpointer>();
/** A thread that has not closed the file by then is ended (a stuck one must not hold up shutdown). */
const CHECKPOINTER_EXIT_MS = 5_000;

/**
 * After `db.destroy()`: resolves once no connection of this handle has the file open. The
 * checkpoint thread closes its own on a message, a moment after the app's; one still starting then
 * opened the file after the close and recreated its -wal and -shm beside a database being removed
 * (a test's clean-up failed with ENOTEMPTY) or restored.
 */
export async function sqliteReleased(db: Kysely<Tables>): Promise<void> {
  const checkpointer = checkpointers.get(db);
  if (checkpointer === undefined) return;
  // A handle never queried was never opened by Kysely, so its close did not stop the thread.
  checkpointer.stop();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), CHECKPOINTER_EXIT_MS);
  });
  const outcome = await Promise.race([checkpointer.exited, late]);
  clearTimeout(timer);
  if (outcome === 'late') await checkpointer.terminate();
}

const BUSY_TIMEOUT_MS = 5_000;

/**
 * Two processes opening a new database together both switch it to WAL, and SQLite answers one of
 * them SQLITE_BUSY at once, without waiting busy_timeout (waiting could deadlock): that start
 * failed with "database is locked" (8 in 40 pairs of processes here). The switch is made once per
 * file and takes a moment, so the one refused tries again a little later, up to busy_timeout; on a
 * file already in WAL the pragma only reads it.
 */
function enableWal(sqlite: BetterSqlite3.Database): void {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      sqlite.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw error;
      // Opening is synchronous (the caller needs the handle now): a short blocking pause, as
      // busy_timeout's own waits are.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

/** How often the checkpoint thread copies the WAL into the database file. */
const CHECKPOINT_INTERVAL_MS = 250;

/**
 * WAL checkpoints off the event loop. With SQLite's automatic checkpoints, the commit that pushes
 * the WAL past 1,000 pages copies them into the database and fsyncs it, on the event loop: under a
 * stream of uploads that held every other request for 10–25 ms (BENCHMARKS.md, "Attachments"). So
 * this connection checkpoints never, and a thread with its own connection does, every
 * CHECKPOINT_INTERVAL_MS. Should that thread fail, automatic checkpoints come back.
 */
interface Checkpointer {
  stop(): void;
  exited: Promise<void>;
  terminate(): Promise<unknown>;
}

function startCheckpointer(sqlite: BetterSqlite3.Database, filename: string): Checkpointer {
  sqlite.pragma('wal_autocheckpoint = 0');
  const worker = startWorker(import.meta.url, 'checkpoint.worker', {
    workerData: { filename, intervalMs: CHECKPOINT_INTERVAL_MS },
  });
  worker.unref();
  let stopping = false;
  const fallBack = () => {
    if (!stopping && sqlite.open) sqlite.pragma('wal_autocheckpoint = 1000');
  };
  worker.on('error', fallBack).on('exit', fallBack);
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    exited,
    terminate: () => worker.terminate(),
    stop() {
      if (stopping) return;
      stopping = true;
      // Kept alive until the thread has closed the file (sqliteReleased), a moment.
      worker.ref();
      worker.postMessage('stop');
    },
  };
}

/**
 * Boolean columns declared before SQLite columns were declared `boolean`: by origin table and
 * column, so aliases do not matter. Newer tables declare `boolean` (see dialect-types.ts).
 */
const LEGACY_BOOLEAN_COLUMNS = new Set(['users.is_admin', 'refresh_tokens.revoked']);

type Convert = (value: unknown) => unknown;
const toBoolean: Convert = (value) => (value === null ? null : value === 1 || value === 1n || value === true);
const toText: Convert = (value) =>
  value instanceof Uint8Array ? Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8') : value;

/** Which result columns need converting, found once per prepared statement from its declared types. */
function rowMapper(statement: BetterSqlite3.Statement): ((row: Record<string, unknown>) => void) | undefined {
  const conversions: Array<[string, Convert]> = [];
  for (const column of statement.columns()) {
    const declared = column.type?.toLowerCase();
    if (declared === 'boolean' || LEGACY_BOOLEAN_COLUMNS.has(`${column.table}.${column.column}`)) {
      conversions.push([column.name, toBoolean]);
    } else if (declared === 'blob') {
      conversions.push([column.name, toText]);
    }
  }
  if (conversions.length === 0) return undefined;
  return (row) => {
    for (const [name, convert] of conversions) row[name] = convert(row[name]);
  };
}

function bindable(parameters: readonly unknown[]): unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < parameters.length; i++) {
    const value = parameters[i];
    if (typeof value === 'boolean') {
      out ??= parameters.slice();
      out[i] = value ? 1 : 0;
    }
  }
  return out ?? (parameters as unknown[]);
}

interface CachedStatement extends SqliteStatement {
  readonly busy: boolean;
}

function wrap(statement: BetterSqlite3.Statement): CachedStatement {
  const reader = statement.reader;
  const map = reader ? rowMapper(statement) : undefined;
  return {
    reader,
    get busy() {
      return statement.busy;
    },
    all(parameters) {
      const rows = statement.all(bindable(parameters)) as Array<Record<string, unknown>>;
      if (map !== undefined) for (const row of rows) map(row);
      return rows;
    },
    run(parameters) {
      return statement.run(bindable(parameters));
    },
    *iterate(parameters) {
      for (const row of statement.iterate(bindable(parameters)) as IterableIterator<Record<string, unknown>>) {
        map?.(row);
        yield row;
      }
    },
  };
}

const NOTHING_TO_ROLL_BACK: SqliteStatement = {
  reader: false,
  all: () => [],
  run: () => ({ changes: 0, lastInsertRowid: 0 }),
  iterate: () => [][Symbol.iterator](),
};

/** Distinct SQL texts kept prepared; the app has a few dozen, IN-lists of different lengths add some. */
const STATEMENT_CACHE_SIZE = 256;

/**
 * Kysely's SQLite driver prepares every query afresh, and parsing and planning the SQL was about a
 * tenth of the server's CPU on a note read (see BENCHMARKS.md). A prepared statement can be run any
 * number of times, so keep the most recently used ones by their SQL text. One still iterating (a
 * streamed query) is busy and not shared: that query gets a statement of its own.
 */
function withStatementCache(sqlite: BetterSqlite3.Database, beforeClose: () => void): SqliteDatabase {
  const cache = new Map<string, CachedStatement>();
  return {
    close: () => {
      beforeClose();
      sqlite.close();
    },
    prepare(sql) {
      // SQLite ends the transaction itself on some errors (a full disk, an I/O error): Kysely's
      // rollback then failed with "cannot rollback - no transaction is active", and that error, not
      // the real one, reached the log and the caller (issue #43).
      if (sql === 'rollback' && !sqlite.inTransaction) return NOTHING_TO_ROLL_BACK;
      const cached = cache.get(sql);
      if (cached !== undefined && !cached.busy) {
        cache.delete(sql); // most recently used goes last
        cache.set(sql, cached);
        return cached;
      }
      const statement = wrap(sqlite.prepare(sql));
      if (cached === undefined) {
        cache.set(sql, statement);
        if (cache.size > STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      }
      return statement;
    },
  };
}
