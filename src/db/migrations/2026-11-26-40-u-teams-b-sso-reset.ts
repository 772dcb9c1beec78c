// Frozen once released: change the schema in a new file.
import { sql, type Kysely } from 'kysely';
import { dialectTypes } from '../dialect-types.js';

/**
 * Teams (#41, part B): a verified e-mail address per account (lower-cased, unique when set);
 * single sign-on identities (one account per provider issuer + subject, never found by name or
 * address); and single-use links (password reset, e-mail confirmation), stored as SHA-256 only.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const { uuid, timestamp } = dialectTypes(db);
  await db.schema.alterTable('users').addColumn('email', 'text').execute();
  await sql`create unique index users_email on users (email) where email is not null`.execute(db);

  await db.schema
    .createTable('oidc_identities')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('user_id', uuid, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('last_login_at', timestamp)
    .execute();
  await sql`create unique index oidc_identities_issuer_subject on oidc_identities (issuer, subject)`.execute(db);
  await sql`create index oidc_identities_user on oidc_identities (user_id)`.execute(db);

  await db.schema
    .createTable('account_links')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('user_id', uuid, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('email', 'text')
    .addColumn('expires_at', timestamp, (c) => c.notNull())
    .addColumn('used_at', timestamp)
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute();
  await sql`create index account_links_user on account_links (user_id, purpose)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('account_links').execute();
  await db.schema.dropTable('oidc_identities').execute();
  await sql`drop index users_email`.execute(db);
  await db.schema.alterTable('users').dropColumn('email').execute();
}
