// Frozen once released: change the schema in a new file.
import { sql, type Kysely } from 'kysely';
import { dialectTypes } from '../dialect-types.js';

/**
 * Teams (issue #41, part A). `users` gains `disabled` (no login, no token works), `last_login_at`
 * and `storage_quota_bytes` (null: STORAGE_QUOTA_BYTES). `invitations`: single-use sign-up links an
 * administrator made; `account_setups`: single-use links where an account an administrator made
 * chooses its password. Only the SHA-256 of each link's token is stored.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const t = dialectTypes(db);
  await db.schema
    .alterTable('users')
    .addColumn('disabled', t.boolean, (c) => c.notNull().defaultTo(t.false))
    .execute();
  await db.schema.alterTable('users').addColumn('last_login_at', t.timestamp).execute();
  await db.schema.alterTable('users').addColumn('storage_quota_bytes', t.bigint).execute();

  await db.schema
    .createTable('invitations')
    .addColumn('id', t.uuid, (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('email', 'text')
    .addColumn('admin', t.boolean, (c) => c.notNull().defaultTo(t.false))
    .addColumn('created_by', t.uuid, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('expires_at', t.timestamp, (c) => c.notNull())
    .addColumn('used_at', t.timestamp)
    .addColumn('used_by', t.uuid, (c) => c.references('users.id').onDelete('set null'))
    .execute();
  await sql`create index invitations_unused on invitations (used_at, created_at)`.execute(db);

  await db.schema
    .createTable('account_setups')
    .addColumn('id', t.uuid, (c) => c.primaryKey())
    .addColumn('user_id', t.uuid, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('expires_at', t.timestamp, (c) => c.notNull())
    .addColumn('used_at', t.timestamp)
    .execute();
  await sql`create index account_setups_user on account_setups (user_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('account_setups').execute();
  await db.schema.dropTable('invitations').execute();
  await db.schema.alterTable('users').dropColumn('storage_quota_bytes').execute();
  await db.schema.alterTable('users').dropColumn('last_login_at').execute();
  await db.schema.alterTable('users').dropColumn('disabled').execute();
}
