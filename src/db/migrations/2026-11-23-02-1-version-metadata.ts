// Frozen once released: change the schema in a new file.
import type { Kysely } from 'kysely';

/**
 * History you can use: a version may carry a name (`label`) and remember the version it was
 * restored from. `notes.pruned` counts the versions retention deleted from the note's history, so
 * a history page of a note without gaps stays a range of version numbers (see listVersions).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('note_versions').addColumn('label', 'text').execute();
  await db.schema.alterTable('note_versions').addColumn('restored_from', 'integer').execute();
  await db.schema
    .alterTable('notes')
    .addColumn('pruned', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('notes').dropColumn('pruned').execute();
  await db.schema.alterTable('note_versions').dropColumn('restored_from').execute();
  await db.schema.alterTable('note_versions').dropColumn('label').execute();
}
