import { compiled } from '../db/compiled.js';
import type { Db } from '../db/schema.js';

export type Role = 'viewer' | 'editor';

const ownedNoteQuery = compiled((db, p: { ownerId: string; noteId: string }) =>
  db
    .selectFrom('notes')
    .select('id')
    .where('id', '=', p.noteId)
    .where('owner_id', '=', p.ownerId)
    .where('deleted_at', 'is', null),
);

/** Whether the note is the owner's and outside the trash (member routes read and write note_members alone). */
export async function isOwnedNote(db: Db, ownerId: string, noteId: string): Promise<boolean> {
  return (await ownedNoteQuery.takeFirst(db, { ownerId, noteId })) !== undefined;
}

export function listMembers(db: Db, noteId: string) {
  return db
    .selectFrom('note_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['m.user_id', 'u.username', 'm.role', 'm.created_at'])
    .where('m.note_id', '=', noteId)
    .orderBy('m.created_at')
    .orderBy('u.username')
    .execute();
}

export async function countMembers(db: Db, noteId: string): Promise<number> {
  const row = await db
    .selectFrom('note_members')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('note_id', '=', noteId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function insertMember(
  db: Db,
  row: { note_id: string; user_id: string; role: Role; created_at: string },
): Promise<void> {
  await db.insertInto('note_members').values(row).execute();
}

export async function updateRole(db: Db, noteId: string, userId: string, role: Role): Promise<boolean> {
  const result = await db
    .updateTable('note_members')
    .set({ role })
    .where('note_id', '=', noteId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteMember(db: Db, noteId: string, userId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('note_members')
    .where('note_id', '=', noteId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Notes shared with the user (outside the trash), most recently updated first, as list rows with their owner and the user's role. */
export function sharedWith(db: Db, userId: string, page: { limit: number; offset: number }) {
  return db
    .selectFrom('note_members as m')
    .innerJoin('notes as n', 'n.id', 'm.note_id')
    .innerJoin('users as o', 'o.id', 'n.owner_id')
    .select([
      'n.id',
      'n.owner_id',
      'n.title',
      'n.updated_at',
      'n.version_id',
      'n.folder_id',
      'n.pinned',
      'n.archived',
      'n.tags',
      'o.username as owner_username',
      'm.role',
    ])
    .where('m.user_id', '=', userId)
    .where('n.deleted_at', 'is', null)
    .orderBy('n.updated_at', 'desc')
    .orderBy('n.id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}
