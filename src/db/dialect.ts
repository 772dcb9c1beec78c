import { PostgresAdapter, sql, type Kysely, type SelectQueryBuilder } from 'kysely';

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
