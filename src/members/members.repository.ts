import { compiled } from '../db/compiled.js';
import type { Db } from '../db/schema.js';

export type Role = 'viewer' | 'editor';

const accessQuery = compiled((db, p: { userId: string; noteId: string }) =>
  db
    .selectFrom('notes as n')
    .leftJoin('note_members as m', (join) => join.onRef('m.note_id', '=', 'n.id').on('m.user_id', '=', p.userId))
    .select(['n.owner_id', 'm.role'])
    .where('n.id', '=', p.noteId)
    .where('n.deleted_at', 'is', null),
);

/** The note's owner and the caller's role on it (null when the caller is not a member); undefined when it is missing or in the trash. */
export function findAccess(
  db: Db,
  userId: string,
  noteId: string,
): Promise<{ owner_id: string; role: Role | null } | undefined> {
  return accessQuery.takeFirst(db, { userId, noteId });
}

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

const audienceQuery = compiled((db, p: { noteId: string }) =>
  db
    .selectFrom('notes as n')
    .leftJoin('note_members as m', 'm.note_id', 'n.id')
    .select(['n.owner_id', 'm.user_id'])
    .where('n.id', '=', p.noteId),
);

/** Everyone a change of the note concerns: its owner and its members (after every save: prepared once). */
export async function audience(db: Db, noteId: string): Promise<string[]> {
  const rows = await audienceQuery.execute(db, { noteId });
  return [...new Set(rows.flatMap((r) => (r.user_id === null ? [r.owner_id] : [r.owner_id, r.user_id])))];
}

/** Everyone a change of each of these notes concerns, by note (read before deleting them). */
export async function audiences(db: Db, noteIds: readonly string[]): Promise<Map<string, string[]>> {
  const told = new Map<string, Set<string>>();
  if (noteIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('notes as n')
    .leftJoin('note_members as m', 'm.note_id', 'n.id')
    .select(['n.id', 'n.owner_id', 'm.user_id'])
    .where('n.id', 'in', noteIds)
    .execute();
  for (const row of rows) {
    const users = told.get(row.id) ?? new Set<string>();
    told.set(row.id, users);
    users.add(row.owner_id);
    if (row.user_id !== null) users.add(row.user_id);
  }
  return new Map([...told].map(([id, users]) => [id, [...users]]));
}
