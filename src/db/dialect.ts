import { PostgresAdapter, sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';

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
export async function selectForUpdate<O>(trx: Kysely<any>, select: SelectQueryBuilder<any, any, O>, takeWriteLock: () => Promise<unknown>): Promise<O[]> {
  if (isPostgres(trx)) return select.forUpdate().execute();
  await takeWriteLock();
  return select.execute();
}

/**
 * After deleting many rows of `table`: PostgreSQL marks their space reusable and refreshes the
 * visibility map (index-only scans) now rather than when autovacuum gets to it; SQLite frees it at once.
 */
export async function reclaimDeletedRows(db: Kysely<any>, table: string): Promise<void> {
  if (isPostgres(db)) await sql`vacuum (analyze) ${sql.table(table)}`.execute(db);
}

/**
 * A binary column read back as bytes. The row mappers turn `blob`/`bytea` columns into strings
 * (they hold UTF-8 text elsewhere, sqlite.ts and postgres.ts), so raw bytes come through an
 * expression: SQLite's `substr` of a blob is a blob of no declared type (left alone); PostgreSQL
 * sends base64 text, decoded here.
 */
export function bytesOf(db: Kysely<any>, column: string): { expression: RawBuilder<unknown>; decode(value: unknown): Buffer } {
  if (isPostgres(db)) {
    return { expression: sql`encode(${sql.ref(column)}, 'base64')`, decode: (value) => Buffer.from(String(value), 'base64') };
  }
  return {
    expression: sql`substr(${sql.ref(column)}, 1)`,
    decode: (value) => (Buffer.isBuffer(value) ? value : Buffer.from(value as Uint8Array)),
  };
}

/** A UUID bound as a value where PostgreSQL cannot infer its type (a select list feeding an insert). */
export function uuidValue(db: Kysely<any>, value: string): RawBuilder<string> {
  return isPostgres(db) ? sql<string>`cast(${value} as uuid)` : sql<string>`${value}`;
}
