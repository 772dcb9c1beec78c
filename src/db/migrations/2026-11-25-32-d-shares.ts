// Frozen once released: change the schema in a new file.
import { sql, type Kysely } from 'kysely';
import { dialectTypes } from '../dialect-types.js';

/**
 * Share links. The token is kept as given (the owner copies the link again from the list; a link is
 * a capability to read one note, which whoever holds it may read anyway). `version` null shows the
 * current version; a number pins that version, which history retention then keeps.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const { uuid, timestamp } = dialectTypes(db);
  await db.schema
    .createTable('shares')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('note_id', uuid, (c) => c.notNull().references('notes.id').onDelete('cascade'))
    .addColumn('owner_id', uuid, (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull().unique())
    .addColumn('version', 'integer')
    .addColumn('expires_at', timestamp)
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('views', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`create index shares_note on shares (note_id, created_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('shares').execute();
}
