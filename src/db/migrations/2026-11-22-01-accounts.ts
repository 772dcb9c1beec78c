// Frozen: this migration must keep producing the same schema; change the schema in a new file.
import { PostgresAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const uuid = pg ? 'uuid' : 'text';
  const timestamp = pg ? 'timestamptz(3)' : 'text';
  const bool = pg ? 'boolean' : 'integer';

  await db.schema
    .createTable('users')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('username', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('is_admin', bool, (c) => c.notNull().defaultTo(pg ? sql`false` : 0))
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('updated_at', timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('users_created_at_id').on('users').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('users_is_admin').on('users').column('is_admin').execute();

  await db.schema
    .createTable('refresh_tokens')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('user_id', uuid, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('family_id', uuid, (c) => c.notNull())
    .addColumn('parent_id', uuid)
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('expires_at', timestamp, (c) => c.notNull())
    .addColumn('revoked', bool, (c) => c.notNull().defaultTo(pg ? sql`false` : 0))
    .addColumn('revoked_at', timestamp)
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('user_agent', 'text')
    .addColumn('ip_address', 'text')
    .execute();
  await db.schema.createIndex('refresh_tokens_user_id').on('refresh_tokens').column('user_id').execute();
  await db.schema.createIndex('refresh_tokens_family_id').on('refresh_tokens').column('family_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('refresh_tokens').execute();
  await db.schema.dropTable('users').execute();
}
