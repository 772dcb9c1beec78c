import type { Db } from '../db/schema.js';

/** A session is a refresh-token family: the tokens of one login, linked by rotation. */
export interface ActiveTokenRow {
  family_id: string;
  /** When the family's oldest stored token was issued: the login, unless that token was pruned. */
  started_at: string;
  created_at: string;
  user_agent: string | null;
  ip_address: string | null;
}

/**
 * The user's active tokens with the start of their session, newest session first. Rotation
 * revokes a token as it issues the next, so a session normally has exactly one active token.
 */
export function listActiveTokens(db: Db, userId: string, now: string): Promise<ActiveTokenRow[]> {
  return db
    .selectFrom('refresh_tokens as t')
    .where('t.user_id', '=', userId)
    .where('t.revoked', '=', false)
    .where('t.expires_at', '>', now)
    .select((eb) => [
      't.family_id',
      't.created_at',
      't.user_agent',
      't.ip_address',
      eb.selectFrom('refresh_tokens as f')
        .select((f) => f.fn.min('f.created_at').as('first'))
        .whereRef('f.family_id', '=', 't.family_id')
        .as('started_at'),
    ])
    .orderBy('started_at', 'desc')
    .orderBy('t.family_id', 'desc')
    .orderBy('t.created_at', 'desc')
    .execute() as Promise<ActiveTokenRow[]>;
}

/**
 * Revokes the user's session: its active tokens, in one statement. 0 means the user has no such
 * active session (unknown, someone else's, or already over), which callers answer as not found.
 */
export async function revokeSession(db: Db, userId: string, familyId: string, now: string): Promise<number> {
  const result = await db
    .updateTable('refresh_tokens')
    .set({ revoked: true, revoked_at: now })
    .where('family_id', '=', familyId)
    .where('user_id', '=', userId)
    .where('revoked', '=', false)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
