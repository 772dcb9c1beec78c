import type { Selectable } from 'kysely';
import type { Db, RefreshTokensTable } from '../db/schema.js';

export type RefreshTokenRow = Selectable<RefreshTokensTable>;

export interface NewRefreshToken {
  id: string;
  user_id: string;
  family_id: string;
  parent_id: string | null;
  token_hash: string;
  expires_at: string;
  created_at: string;
  user_agent: string | null;
  ip_address: string | null;
}

export async function insertRefreshToken(db: Db, token: NewRefreshToken): Promise<void> {
  await db.insertInto('refresh_tokens').values({ ...token, revoked: false, revoked_at: null }).execute();
}

/**
 * Revokes the token if, and only if, it is still active: one conditional UPDATE, so of several
 * concurrent refreshes with the same token exactly one gets the row back.
 */
export function revokeIfActive(db: Db, tokenHash: string, now: string): Promise<RefreshTokenRow | undefined> {
  return db
    .updateTable('refresh_tokens')
    .set({ revoked: true, revoked_at: now })
    .where('token_hash', '=', tokenHash)
    .where('revoked', '=', false)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
}

export function findByHash(db: Db, tokenHash: string): Promise<RefreshTokenRow | undefined> {
  return db.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

export async function revokeAllForUser(db: Db, userId: string, now: string): Promise<void> {
  await db
    .updateTable('refresh_tokens')
    .set({ revoked: true, revoked_at: now })
    .where('user_id', '=', userId)
    .where('revoked', '=', false)
    .execute();
}

export async function revokeFamily(db: Db, familyId: string, now: string): Promise<number> {
  const result = await db
    .updateTable('refresh_tokens')
    .set({ revoked: true, revoked_at: now })
    .where('family_id', '=', familyId)
    .where('revoked', '=', false)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
