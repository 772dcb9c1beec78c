import {
  PostgresAdapter,
  sql,
  type AliasedRawBuilder,
  type Kysely,
  type RawBuilder,
  type SelectQueryBuilder,
} from 'kysely';

/** Which engine a handle (or transaction) talks to, for the few features written per dialect (search). */
export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * Runs `select` so that what it read stays locked until the transaction ends. PostgreSQL locks the
 * rows (FOR UPDATE, in the query's order, so two callers queue instead of deadlocking). SQLite
 * locks the whole database, not rows: `takeWriteLock` (a write that changes nothing) runs first, so
 * the transaction holds the write lock now instead of upgrading a read lock later.
 */
export async function selectForUpdate<O>(
  trx: Kysely<any>,
  select: SelectQueryBuilder<any, any, O>,
  takeWriteLock: () => Promise<unknown>,
): Promise<O[]> {
  if (isPostgres(trx)) return select.forUpdate().execute();
  await takeWriteLock();
  return select.execute();
}

/**
 * Holds the lock named `name` until the transaction ends, locking no row. PostgreSQL: a
 * transaction-scoped advisory lock on a 64-bit hash of the name (a collision only makes two
 * unrelated holders queue). A row lock would not do where the row is one that foreign keys point at:
 * FOR UPDATE, which conflicts with the FOR KEY SHARE every referencing insert takes. SQLite: `takeWriteLock`
 * (a write that changes nothing) takes the database's write lock, which serialises everything anyway.
 */
export async function transactionLock(
  trx: Kysely<any>,
  name: string,
  takeWriteLock: () => Promise<unknown>,
): Promise<void> {
  if (isPostgres(trx)) await sql`select pg_advisory_xact_lock(hashtextextended(${name}, 0))`.execute(trx);
  else await takeWriteLock();
}

/**
 * After deleting many rows of `table`: PostgreSQL marks their space reusable and refreshes the
 * visibility map (index-only scans) now rather than when autovacuum gets to it; SQLite frees it at once.
 */
export async function reclaimDeletedRows(db: Kysely<any>, table: string): Promise<void> {
  if (isPostgres(db)) await sql`vacuum (analyze) ${sql.table(table)}`.execute(db);
}

/**
 * A binary column read back as bytes, as the columns of one row. The row mappers turn `blob`/`bytea`
 * columns into strings (they hold UTF-8 text elsewhere, sqlite.ts and postgres.ts), so raw bytes
 * come through expressions: SQLite's `substr` of a blob is a blob of no declared type (left alone,
 * one column); PostgreSQL sends base64 text, in slices of `sliceBytes`, so that no string is large
 * enough for V8's large-object space, which only a full collection empties (a 25 MiB download in
 * one-piece strings grew the process by 80 MB before one came).
 */
export function bytesOf(
  db: Kysely<any>,
  column: string,
  maxBytes: number,
  sliceBytes = 48 * 1024,
): {
  expressions: Array<AliasedRawBuilder<unknown, string>>;
  decode(row: Record<string, unknown>): Buffer;
} {
  if (!isPostgres(db)) {
    return {
      expressions: [sql`substr(${sql.ref(column)}, 1)`.as('b0')],
      decode: (row) => (Buffer.isBuffer(row.b0) ? row.b0 : Buffer.from(row.b0 as Uint8Array)),
    };
  }
  const slices = Math.max(1, Math.ceil(maxBytes / sliceBytes));
  return {
    expressions: Array.from({ length: slices }, (_, i) =>
      sql`encode(substring(${sql.ref(column)} from ${sql.lit(i * sliceBytes + 1)} for ${sql.lit(sliceBytes)}), 'base64')`.as(
        `b${i}`,
      ),
    ),
    decode: (row) =>
      Buffer.concat(Array.from({ length: slices }, (_, i) => Buffer.from(String(row[`b${i}`] ?? ''), 'base64'))),
  };
}

/** A UUID bound as a value where PostgreSQL cannot infer its type (a select list feeding an insert). */
export function uuidValue(db: Kysely<any>, value: string): RawBuilder<string> {
  return isPostgres(db) ? sql<string>`cast(${value} as uuid)` : sql<string>`${value}`;
}

/** The length in bytes of a bytea/blob column (SQLite's length() counts a blob's bytes). */
export function byteLength(db: Kysely<any>, column: string): RawBuilder<number> {
  return isPostgres(db) ? sql<number>`octet_length(${sql.ref(column)})` : sql<number>`length(${sql.ref(column)})`;
}

/**
 * The first `bytes` bytes of a bytea/blob column holding UTF-8 text, as an expression; `decode`
 * turns what a row holds into a string (a character the cut went through is dropped). Only the
 * prefix leaves the database (PostgreSQL decompresses a TOASTed value only that far).
 */
export function textPrefix(
  db: Kysely<any>,
  column: string,
  bytes: number,
): {
  expression: RawBuilder<unknown>;
  decode(value: unknown): string;
} {
  const ref = sql.ref(column);
  return {
    expression: isPostgres(db)
      ? sql`substring(${ref} from 1 for ${sql.lit(bytes)})`
      : sql`substr(${ref}, 1, ${sql.lit(bytes)})`,
    decode(value) {
      if (value === null || value === undefined) return '';
      // PostgreSQL's bytea arrives as a string already (postgres.ts); SQLite's blob of an expression as bytes.
      const text = typeof value === 'string' ? value : Buffer.from(value as Uint8Array).toString('utf8');
      // Only a cut ends in a broken character (1-3 bytes, read as one U+FFFD of 3): a text shorter
      // than the prefix keeps a U+FFFD of its own.
      return text.endsWith('\uFFFD') && Buffer.byteLength(text) >= bytes - 2 ? text.slice(0, -1) : text;
    },
  };
}
