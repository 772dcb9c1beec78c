import type { Insertable, Selectable } from 'kysely';
import type { Db, InvitationsTable } from '../db/schema.js';

export type InvitationRow = Selectable<InvitationsTable>;

export async function insertInvitation(db: Db, row: Insertable<InvitationsTable>): Promise<void> {
  await db.insertInto('invitations').values(row).execute();
}

/** The unused, unexpired ones, newest first (at most `limit`). */
export function listOpenInvitations(db: Db, now: string, limit: number): Promise<InvitationRow[]> {
  return db
    .selectFrom('invitations')
    .selectAll()
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** An invitation that can still be used: unused and unexpired. */
export function findUsableInvitation(db: Db, tokenHash: string, now: string): Promise<InvitationRow | undefined> {
  return db
    .selectFrom('invitations')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

/**
 * Marks the invitation used by `userId`, in the caller's transaction (the one that creates the
 * account). The condition makes it single use: of two sign-ups racing with one invitation, the
 * second's update finds it used (PostgreSQL re-reads the row after the first commits) and changes
 * nothing. True when this call used it.
 */
export async function redeemInvitation(db: Db, id: string, userId: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('invitations')
    .set({ used_at: now, used_by: userId })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Revoking deletes an unused invitation; a used one stays as the record of who it let in. */
export async function deleteOpenInvitation(db: Db, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('invitations')
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** Deletes the unused invitations `createdBy` made, in the caller's transaction; how many. */
export async function deleteOpenInvitationsMadeBy(db: Db, createdBy: string): Promise<number> {
  const result = await db
    .deleteFrom('invitations')
    .where('created_by', '=', createdBy)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
