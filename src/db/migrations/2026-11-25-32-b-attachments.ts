// Frozen once released: change the schema in a new file.
import { sql, type Kysely } from 'kysely';
import { dialectTypes } from '../dialect-types.js';

/**
 * Attachments. `attachment_blobs`: each distinct content of a user once (by SHA-256), with the key
 * its bytes are stored under; an upload in progress has `sha256` 'pending:<key>' until its hash is
 * known. `attachment_chunks`: the bytes themselves when ATTACHMENT_STORAGE=database, in pieces, going
 * with their blob. `attachments`: what users see (name, type), several may share a blob.
 * `attachment_refs`: which versions link to which attachments, going with their version.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const { uuid, timestamp, bigint, pg } = dialectTypes(db);

  await db.schema
    .createTable('attachment_blobs')
    .addColumn('owner_id', uuid, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('size', bigint, (c) => c.notNull())
    .addColumn('storage_key', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('attachment_blobs_pkey', ['owner_id', 'sha256'])
    .execute();

  await db.schema
    .createTable('attachment_chunks')
    .addColumn('storage_key', 'text', (c) => c.notNull().references('attachment_blobs.storage_key').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('data', pg ? 'bytea' : 'blob', (c) => c.notNull())
    .addPrimaryKeyConstraint('attachment_chunks_pkey', ['storage_key', 'seq'])
    .execute();

  await db.schema
    .createTable('attachments')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('owner_id', uuid, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size', bigint, (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addForeignKeyConstraint(
      'attachments_blob_fkey',
      ['owner_id', 'sha256'],
      'attachment_blobs',
      ['owner_id', 'sha256'],
      (c) => c.onDelete('cascade'),
    )
    .execute();
  await sql`create index attachments_owner_created on attachments (owner_id, created_at desc, id desc)`.execute(db);
  await sql`create index attachments_blob on attachments (owner_id, sha256)`.execute(db);

  // No cascade from attachments: an attachment a version links to cannot be deleted (409). Checked
  // at commit: deleting an account removes its attachments and (through notes and versions) the
  // references in one statement, and PostgreSQL would check an immediate constraint between the two.
  await db.schema
    .createTable('attachment_refs')
    .addColumn('version_id', uuid, (c) => c.notNull().references('note_versions.id').onDelete('cascade'))
    .addColumn('attachment_id', uuid, (c) => c.notNull())
    .addPrimaryKeyConstraint('attachment_refs_pkey', ['version_id', 'attachment_id'])
    .addForeignKeyConstraint('attachment_refs_attachment_fkey', ['attachment_id'], 'attachments', ['id'], (c) =>
      c.deferrable().initiallyDeferred(),
    )
    .execute();
  await sql`create index attachment_refs_attachment on attachment_refs (attachment_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['attachment_refs', 'attachments', 'attachment_chunks', 'attachment_blobs'])
    await db.schema.dropTable(table).execute();
}
