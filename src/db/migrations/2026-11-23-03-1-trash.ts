// Frozen once released: change the schema in a new file.
import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * The trash: a deleted note keeps its row and history and only gets a deletion time, so that it
 * can be restored whole. Every notes query filters `deleted_at is null`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .alterTable('notes')
    .addColumn('deleted_at', pg ? 'timestamptz(3)' : 'text')
    .execute();
  // GET /trash: one user's trashed notes, most recently deleted first.
  await sql`create index notes_owner_deleted on notes (owner_id, deleted_at desc, id desc) where deleted_at is not null`.execute(
    db,
  );
  // The purge job: every trashed note older than the cut-off, across users.
  await sql`create index notes_deleted_at on notes (deleted_at) where deleted_at is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index notes_deleted_at`.execute(db);
  await sql`drop index notes_owner_deleted`.execute(db);
  await db.schema.alterTable('notes').dropColumn('deleted_at').execute();
}
