// Frozen: this migration must keep producing the same schema; change the schema in a new file.
import { PostgresAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const uuid = pg ? 'uuid' : 'text';
  const timestamp = pg ? 'timestamptz(3)' : 'text';
  // Bytes, not text: PostgreSQL text cannot hold NUL, and notes must round-trip any JSON string.
  const bytes = pg ? 'bytea' : 'blob';

  await db.schema
    .createTable('notes')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('owner_id', uuid, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('title', bytes, (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('version_id', uuid, (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('updated_at', timestamp, (c) => c.notNull())
    .execute();
  // GET /notes: the caller's notes, most recently updated first.
  await sql`create index notes_owner_updated on notes (owner_id, updated_at desc, id desc)`.execute(db);

  await db.schema
    .createTable('note_versions')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('note_id', uuid, (c) => c.notNull().references('notes.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('title', bytes, (c) => c.notNull())
    .addColumn('content', bytes, (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    // History pages are range scans on this key, whatever their depth.
    .addUniqueConstraint('note_versions_note_id_version', ['note_id', 'version'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('note_versions').execute();
  await db.schema.dropTable('notes').execute();
}
