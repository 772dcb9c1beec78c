import type { Db } from '../db/schema.js';

/** The notes rows that are in the trash (deleted_at set): the notes table's storage, used by src/trash. */

export function listTrash(db: Db, ownerId: string, page: { limit: number; offset: number }) {
  return db
    .selectFrom('notes')
    .select(['id', 'title', 'deleted_at'])
    .where('owner_id', '=', ownerId)
    .where('deleted_at', 'is not', null)
    .orderBy('deleted_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

/** Takes a note out of the trash; false when it is not there (or not the caller's). */
export async function restoreNote(db: Db, ownerId: string, noteId: string): Promise<boolean> {
  const result = await db
    .updateTable('notes')
    // The caller puts the tag rows back.
    .set({ deleted_at: null, tags_listed: true })
    .where('id', '=', noteId)
    .where('owner_id', '=', ownerId)
    .where('deleted_at', 'is not', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Deletes a trashed note for good; its versions (and their search entries) go with it by cascade. */
export async function purgeNote(db: Db, ownerId: string, noteId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('notes')
    .where('id', '=', noteId)
    .where('owner_id', '=', ownerId)
    .where('deleted_at', 'is not', null)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Up to `limit` ids of notes trashed at or before `cutoff`, oldest first. */
export async function expiredIds(db: Db, cutoff: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('notes')
    .select('id')
    .where('deleted_at', 'is not', null)
    .where('deleted_at', '<=', cutoff)
    .orderBy('deleted_at')
    .limit(limit)
    .execute();
  return rows.map((row) => row.id);
}

/** Deletes these notes if they are still in the trash (a restore may have won the race): the ids it deleted. */
export async function deleteTrashed(db: Db, ids: string[], cutoff: string): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .deleteFrom('notes')
    .where('id', 'in', ids)
    .where('deleted_at', 'is not', null)
    .where('deleted_at', '<=', cutoff)
    .returning('id')
    .execute();
  return rows.map((row) => row.id);
}
