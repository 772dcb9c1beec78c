// Frozen once released: change the schema in a new file.
import { sql, type Kysely } from 'kysely';
import { dialectTypes } from '../dialect-types.js';

/**
 * Notes shared with people: `note_members` (a viewer or an editor per note; going with the note or
 * either account), and who wrote each version (`note_versions.author_id`, null once that account is
 * deleted). Versions written before this were all their owner's, so they are filled in as such.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const { uuid, timestamp } = dialectTypes(db);
  await db.schema
    .createTable('note_members')
    .addColumn('note_id', uuid, (c) => c.notNull().references('notes.id').onDelete('cascade'))
    .addColumn('user_id', uuid, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('note_members_pkey', ['note_id', 'user_id'])
    .execute();
  // "Shared with me", and the members a deleted account leaves.
  await sql`create index note_members_user on note_members (user_id, note_id)`.execute(db);

  await db.schema
    .alterTable('note_versions')
    .addColumn('author_id', uuid, (c) => c.references('users.id').onDelete('set null'))
    .execute();
  await sql`update note_versions set author_id = (select owner_id from notes where notes.id = note_versions.note_id)`.execute(
    db,
  );
  // A deleted account's versions are found by this (set null), not by a scan of every version.
  await sql`create index note_versions_author on note_versions (author_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index note_versions_author`.execute(db);
  await db.schema.alterTable('note_versions').dropColumn('author_id').execute();
  await db.schema.dropTable('note_members').execute();
}
