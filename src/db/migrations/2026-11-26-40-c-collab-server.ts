// Frozen once released: change the schema in a new file.
import type { Kysely } from 'kysely';
import { dialectTypes } from '../dialect-types.js';

/**
 * Live co-editing (issue #39). `collab_documents`: a note's Yjs document state, stored as people
 * type (debounced), so a restart loses nothing acknowledged; it goes with its note.
 * `note_version_authors`: everyone who typed into the live session a version was written from, in
 * order (the first is the version's author_id); a version without rows has its author_id alone.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const { uuid, timestamp } = dialectTypes(db);
  await db.schema
    .createTable('collab_documents')
    .addColumn('note_id', uuid, (c) => c.primaryKey().references('notes.id').onDelete('cascade'))
    // Base64: both engines' byte columns are read back as UTF-8 text by this app's drivers.
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('updated_at', timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('note_version_authors')
    .addColumn('version_id', uuid, (c) => c.notNull().references('note_versions.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('user_id', uuid, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('note_version_authors_pkey', ['version_id', 'position'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('note_version_authors').execute();
  await db.schema.dropTable('collab_documents').execute();
}
