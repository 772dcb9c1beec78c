// Frozen once released: change the schema in a new file.
import { sql, type Kysely } from 'kysely';

/**
 * Export reads the owner's live notes in keyset pages ordered by (created_at, id). Without an index
 * in that order every page sorted all of the owner's notes (issue #19: 66,000 notes took minutes).
 * Partial like the query (`deleted_at is null`), so trashed notes cost it nothing.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index notes_owner_created on notes (owner_id, created_at, id) where deleted_at is null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index notes_owner_created`.execute(db);
}
