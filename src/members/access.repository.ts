import { type RawBuilder, type SqlBool, sql } from 'kysely';
import { compiled } from '../db/compiled.js';
import type { Db } from '../db/schema.js';
import type { Role } from './members.repository.js';

/**
 * Who may read or write a note, in one place (issue #38). A note outside the trash is readable by
 * its owner and by its members of any role, and writable by its owner and its `editor` members.
 * Every query elsewhere that needs it takes these predicates (the architecture test keeps the
 * members table named only here and in members.repository.ts). Each is plain SQL on both engines,
 * so it fits Kysely's `where` and `sql` templates alike; the membership test is an EXISTS probe of
 * the table's primary key (note_id, user_id). Writes are decided one note at a time, by noteRole
 * (the `note` route policy and members.service's actingOwner): no query lists the notes a user may
 * write, so there is no predicate for it.
 */

/** Whether `userId` is a member of the note whose id is in `noteId` (a column, such as `n.id`), of any role. */
export function isMember(userId: string, noteId: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`exists (select 1 from note_members m where m.note_id = ${sql.ref(noteId)} and m.user_id = ${userId})`;
}

/** The note row `notes` (an alias, such as `n`) is the user's own or shared with them; the trash is the caller's to check. */
export function ownedOrShared(userId: string, notes: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`(${sql.ref(`${notes}.owner_id`)} = ${userId} or ${isMember(userId, `${notes}.id`)})`;
}

/** The note row `notes` is one the user may read: outside the trash, and theirs or shared with them. */
export function readableBy(userId: string, notes: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`(${sql.ref(`${notes}.deleted_at`)} is null and ${ownedOrShared(userId, notes)})`;
}

/** What a user is to a note: its owner, a member with a role, or nothing. */
export type NoteRole = 'owner' | Role;

const roleQuery = compiled((db, p: { userId: string; noteId: string }) =>
  db
    .selectFrom('notes as n')
    .leftJoin('note_members as m', (join) => join.onRef('m.note_id', '=', 'n.id').on('m.user_id', '=', p.userId))
    .select(['n.owner_id', 'm.role'])
    .where('n.id', '=', p.noteId)
    .where('n.deleted_at', 'is', null),
);

/**
 * The note's owner and what the user is to it (null for a stranger); undefined when the note is
 * missing or in the trash. One primary-key look-up (the `note` route policy asks it on every call).
 */
export async function noteRole(
  db: Db,
  userId: string,
  noteId: string,
): Promise<{ ownerId: string; role: NoteRole | null } | undefined> {
  const row = await roleQuery.takeFirst(db, { userId, noteId });
  if (row === undefined) return undefined;
  return { ownerId: row.owner_id, role: row.owner_id === userId ? 'owner' : row.role };
}

/** The people who shared notes (outside the trash) with the user. */
export async function sharersOf(db: Db, userId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('note_members as m')
    .innerJoin('notes as n', 'n.id', 'm.note_id')
    .select('n.owner_id')
    .distinct()
    .where('m.user_id', '=', userId)
    .where('n.deleted_at', 'is', null)
    .execute();
  return rows.map((row) => row.owner_id);
}

const audienceQuery = compiled((db, p: { noteId: string }) =>
  db
    .selectFrom('notes as n')
    .leftJoin('note_members as m', 'm.note_id', 'n.id')
    .select(['n.owner_id', 'm.user_id'])
    .where('n.id', '=', p.noteId),
);

/**
 * Everyone a change of the note concerns: its owner and its members (after every save: prepared once).
 * The trash is not looked at: a note being trashed or restored is news to the same people.
 */
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
