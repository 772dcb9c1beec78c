// Frozen once released: change the schema in a new file.
import { sql, type Kysely } from 'kysely';
import { dialectTypes } from '../dialect-types.js';

/** Personal access tokens: only the SHA-256 of each token is stored; scopes comma-separated. */
export async function up(db: Kysely<any>): Promise<void> {
  const { uuid, timestamp } = dialectTypes(db);
  await db.schema
    .createTable('access_tokens')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('user_id', uuid, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('expires_at', timestamp)
    .addColumn('last_used_at', timestamp)
    .execute();
  await sql`create index access_tokens_user on access_tokens (user_id, created_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('access_tokens').execute();
}
