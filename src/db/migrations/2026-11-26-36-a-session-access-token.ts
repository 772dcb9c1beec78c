// Frozen once released: change the schema in a new file.
import type { Kysely } from 'kysely';

/**
 * The jti of the access token issued with each refresh token, so that the sessions list can tell
 * which session is the caller's own ("this device") while the access token keeps exactly the
 * contract's claims. Null for tokens issued before.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('refresh_tokens').addColumn('access_jti', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('refresh_tokens').dropColumn('access_jti').execute();
}
