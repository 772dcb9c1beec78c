// Frozen once released: change the schema in a new file.
import type { Kysely } from 'kysely';

/**
 * Every /api/auth call now asks whether its access token's session is still alive, by the jti
 * stored with the refresh token it was issued with (sessions/session-binding.ts), and live streams
 * ask it for many tokens at once: an index, so that is one probe rather than a scan of the user's
 * tokens. Only tokens that name one are indexed (those issued before 2026-11-26 have none).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('refresh_tokens_access_jti')
    .on('refresh_tokens')
    .column('access_jti')
    .where('access_jti', 'is not', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('refresh_tokens_access_jti').execute();
}
