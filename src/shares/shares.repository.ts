import { sql } from 'kysely';
import type { Db } from '../db/schema.js';

/** Storage of share links. Columns named, never `*` (db/compiled.ts). */

const SHARE_COLUMNS = ['id', 'note_id', 'token', 'version', 'expires_at', 'created_at', 'views'] as const;

export async function insertShare(
  db: Db,
  row: {
    id: string;
    note_id: string;
    owner_id: string;
    token: string;
    version: number | null;
    expires_at: string | null;
    created_at: string;
  },
) {
  await db.insertInto('shares').values(row).execute();
}

export function listShares(db: Db, ownerId: string, noteId: string) {
  return db
    .selectFrom('shares')
    .select(SHARE_COLUMNS)
    .where('owner_id', '=', ownerId)
    .where('note_id', '=', noteId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function deleteShare(db: Db, ownerId: string, noteId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('shares')
    .where('owner_id', '=', ownerId)
    .where('note_id', '=', noteId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/**
 * What a link shows, in one statement for every kind of miss (unknown, expired, the note in the
 * trash, a pinned version gone, its owner's account disabled: it publishes nothing, as none of its
 * tokens works, until enabled again): the version's id, text and time, and the note's owner and
 * current version. The view is counted by the caller (countView), only when
 * something was found.
 */
export async function findShown(db: Db, token: string, now: string) {
  return db
    .selectFrom('shares as s')
    .innerJoin('notes as n', 'n.id', 's.note_id')
    .innerJoin('users as u', (join) => join.onRef('u.id', '=', 'n.owner_id').on('u.disabled', '=', false))
    .innerJoin('note_versions as v', (join) =>
      join
        .onRef('v.note_id', '=', 's.note_id')
        .on((eb) => eb('v.version', '=', eb.fn.coalesce('s.version', 'n.version'))),
    )
    .select([
      's.id as share_id',
      's.version as pinned',
      'n.owner_id',
      'n.version as current',
      'v.id as version_id',
      'v.version',
      'v.title',
      'v.content',
      'v.created_at',
    ])
    .where('s.token', '=', token)
    .where('n.deleted_at', 'is', null)
    .where((eb) => eb.or([eb('s.expires_at', 'is', null), eb('s.expires_at', '>', now)]))
    .executeTakeFirst();
}

export async function countView(db: Db, shareId: string): Promise<void> {
  await db.updateTable('shares').set({ views: sql`views + 1` }).where('id', '=', shareId).execute();
}

/** Whether the version links to the attachment (its references, recorded when it was written). */
export async function versionLinks(db: Db, versionId: string, attachmentId: string): Promise<boolean> {
  const row = await db
    .selectFrom('attachment_refs')
    .select('attachment_id')
    .where('version_id', '=', versionId)
    .where('attachment_id', '=', attachmentId)
    .executeTakeFirst();
  return row !== undefined;
}
