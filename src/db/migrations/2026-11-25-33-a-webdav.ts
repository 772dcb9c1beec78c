// Frozen once released: change the schema in a new file.
import { sql, type Kysely } from 'kysely';
import { dialectTypes } from '../dialect-types.js';

/**
 * WebDAV. `dav_files`: files other than notes, placed in a folder under a name, each an attachment
 * (its bytes, quota and clean-up are the attachments'); they go with their folder. `dav_properties`:
 * dead properties clients set with PROPPATCH, by the resource's id (a note's, folder's, file's, or
 * the user's for the top level), the value kept as the XML it was sent as. `dav_locks`: write locks
 * by path, kept in the database so that every instance sees them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const { uuid, timestamp } = dialectTypes(db);
  await db.schema
    .createTable('dav_files')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('owner_id', uuid, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('folder_id', uuid, (c) => c.references('folders.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('attachment_id', uuid, (c) => c.notNull().references('attachments.id').onDelete('cascade'))
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('updated_at', timestamp, (c) => c.notNull())
    .execute();
  // One file per name in a folder; the top level (null folder) as its own value.
  await sql`create unique index dav_files_name on dav_files (owner_id, coalesce(folder_id, owner_id), name_key)`.execute(
    db,
  );
  await sql`create index dav_files_attachment on dav_files (attachment_id)`.execute(db);

  await db.schema
    .createTable('dav_properties')
    .addColumn('owner_id', uuid, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('resource_id', uuid, (c) => c.notNull())
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('dav_properties_pkey', ['resource_id', 'namespace', 'name'])
    .execute();

  await db.schema
    .createTable('dav_locks')
    .addColumn('token', 'text', (c) => c.primaryKey())
    .addColumn('owner_id', uuid, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('depth_infinity', 'boolean', (c) => c.notNull())
    .addColumn('exclusive', 'boolean', (c) => c.notNull())
    .addColumn('lock_owner', 'text', (c) => c.notNull())
    .addColumn('timeout_seconds', 'integer', (c) => c.notNull())
    .addColumn('expires_at', timestamp, (c) => c.notNull())
    .execute();
  await sql`create index dav_locks_owner on dav_locks (owner_id, expires_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['dav_locks', 'dav_properties', 'dav_files']) await db.schema.dropTable(table).execute();
}
