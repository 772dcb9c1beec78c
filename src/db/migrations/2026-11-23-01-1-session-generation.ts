// Frozen once released: change the schema in a new file.
import type { Kysely } from 'kysely';

/**
 * Ending sessions wins over issuing them. Logout, a password change and deletion bump the user's
 * session generation under the user row's lock; a login stores its token only if the generation it
 * read before checking the password is still current. Auth events gain an index for retention.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('session_generation', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('auth_events_created_at').on('auth_events').column('created_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('auth_events_created_at').execute();
  await db.schema.alterTable('users').dropColumn('session_generation').execute();
}
