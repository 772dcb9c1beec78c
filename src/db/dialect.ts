import { PostgresAdapter, type Kysely } from 'kysely';

/** Which engine a handle (or transaction) talks to, for the few features written per dialect (search). */
export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
