// Frozen once released: change the schema in a new file.
import { sql, type Kysely } from 'kysely';
import { dialectTypes } from '../dialect-types.js';

/**
 * Organising notes: folders (a tree per user), and on each note its folder, a pin, an archive flag
 * and the tags of its current version. `note_tags` holds one row per tag a note can be found by
 * (`#a/b` gives `a/b` and `a`) while the note is outside the trash, so filtering by a tag and
 * counting tags are index look-ups. `notes.tags` keeps the note's own tags (space-separated: a tag
 * never holds whitespace) for lists; null means "not yet derived" — notes written before this
 * migration get theirs from the start-up back-fill, which needs the text-folding code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const { uuid, timestamp, boolean, false: no } = dialectTypes(db);

  await db.schema
    .createTable('folders')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('owner_id', uuid, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('parent_id', uuid, (c) => c.references('folders.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    // The name as compared: NFC, lower-cased (sibling names are unique ignoring case).
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('updated_at', timestamp, (c) => c.notNull())
    .execute();
  // Two partial indexes, because a unique index treats null parents as all different.
  await sql`create unique index folders_sibling_name on folders (owner_id, parent_id, name_key) where parent_id is not null`.execute(
    db,
  );
  await sql`create unique index folders_top_name on folders (owner_id, name_key) where parent_id is null`.execute(db);
  // Deleting a folder cascades to its children.
  await sql`create index folders_parent on folders (parent_id)`.execute(db);

  // A deleted folder's trashed notes come back to the top level: the reference becomes null.
  await db.schema
    .alterTable('notes')
    .addColumn('folder_id', uuid, (c) => c.references('folders.id').onDelete('set null'))
    .execute();
  await db.schema
    .alterTable('notes')
    .addColumn('pinned', boolean, (c) => c.notNull().defaultTo(no))
    .execute();
  await db.schema
    .alterTable('notes')
    .addColumn('archived', boolean, (c) => c.notNull().defaultTo(no))
    .execute();
  await db.schema.alterTable('notes').addColumn('tags', 'text').execute();
  // GET /notes (with or without a folder): pinned first, then most recently updated, one range scan.
  await sql`create index notes_owner_list on notes (owner_id, archived, pinned desc, updated_at desc, id desc) where deleted_at is null`.execute(
    db,
  );
  await sql`create index notes_owner_folder on notes (owner_id, folder_id, archived, pinned desc, updated_at desc, id desc) where deleted_at is null`.execute(
    db,
  );
  await sql`create index notes_folder on notes (folder_id)`.execute(db);

  await db.schema
    .createTable('note_tags')
    .addColumn('note_id', uuid, (c) => c.notNull().references('notes.id').onDelete('cascade'))
    .addColumn('owner_id', uuid, (c) => c.notNull())
    .addColumn('tag', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('note_tags_pkey', ['note_id', 'tag'])
    .execute();
  await sql`create index note_tags_owner_tag on note_tags (owner_id, tag, note_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('note_tags').execute();
  await sql`drop index notes_folder`.execute(db);
  await sql`drop index notes_owner_folder`.execute(db);
  await sql`drop index notes_owner_list`.execute(db);
  for (const column of ['tags', 'archived', 'pinned', 'folder_id']) {
    await db.schema.alterTable('notes').dropColumn(column).execute();
  }
  await db.schema.dropTable('folders').execute();
}
