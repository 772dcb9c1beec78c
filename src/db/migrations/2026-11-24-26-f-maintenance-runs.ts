// Frozen once released: change the schema in a new file.
import { PostgresAdapter, type Kysely } from 'kysely';

/**
 * When each periodic maintenance task last started, and what it did. Every instance (and every
 * worker) ticks on its own timer; a task runs only when its row says the interval has passed, so a
 * pass happens once per interval across all of them, also at each restart of a replica.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('maintenance_runs')
    .addColumn('task', 'text', (c) => c.primaryKey())
    .addColumn('last_run_at', pg ? 'timestamptz(3)' : 'text')
    .addColumn('last_summary', 'text')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('maintenance_runs').execute();
}
