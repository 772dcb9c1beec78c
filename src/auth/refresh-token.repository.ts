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

/** True when the token has a successor: it was spent on a refresh, not revoked by a sign-out. */
export async function wasRotated(db: Db, token: { id: string; family_id: string }): Promise<boolean> {
  const child = await db
    .selectFrom('refresh_tokens')
    .select('id')
    .where('family_id', '=', token.family_id) // uses the family index
    .where('parent_id', '=', token.id)
    .limit(1)
    .executeTakeFirst();
  return child !== undefined;
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

/**
 * Deletes tokens that can never be used again: expired ones, and revoked ones whose whole session
 * is over. Revoked tokens of a live session stay, so replaying one still triggers theft detection.
 */
export async function pruneRefreshTokens(db: Db, now: string): Promise<number> {
  const result = await db
    .deleteFrom('refresh_tokens')
    .where((eb) =>
      eb.or([
        eb('expires_at', '<=', now),
        eb.and([
          eb('revoked', '=', true),
          eb('family_id', 'not in', eb.selectFrom('refresh_tokens as live')
            .select('live.family_id')
            .where('live.revoked', '=', false)
            .where('live.expires_at', '>', now)),
        ]),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
