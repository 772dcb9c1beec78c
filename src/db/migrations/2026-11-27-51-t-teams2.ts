// Frozen once released: change the schema in a new file.
import type { Kysely } from 'kysely';
import { dialectTypes } from '../dialect-types.js';

/**
 * Teams (#41, part C): `users.reenabled_at`, when an administrator last enabled the account again.
 * An access token issued before it belonged to a session the disabling ended, so the access layer
 * refuses it even on the routes that do not look at sessions (accounts/account-status.ts).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const { timestamp } = dialectTypes(db);
  await db.schema.alterTable('users').addColumn('reenabled_at', timestamp).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('reenabled_at').execute();
}
