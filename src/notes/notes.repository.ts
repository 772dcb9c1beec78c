import { sql } from 'kysely';
import type { Db } from '../db/schema.js';

export interface NoteRecord {
  id: string;
  owner_id: string;
  title: Buffer;
  content: Buffer;
  version: number;
  version_id: string;
  created_at: Date | string;
  updated_at: Date | string;
}

export async function insertNote(
  db: Db,
  note: { id: string; owner_id: string; title: Buffer; version_id: string; now: string },
): Promise<void> {
  await db.insertInto('notes').values({
    id: note.id, owner_id: note.owner_id, title: note.title, version: 1, version_id: note.version_id,
    created_at: note.now, updated_at: note.now,
  }).execute();
}

export async function insertVersion(
  db: Db,
  version: { id: string; note_id: string; version: number; title: Buffer; content: Buffer; created_at: string },
): Promise<void> {
  await db.insertInto('note_versions').values(version).execute();
}

/** The note with its current version's content: two primary-key look-ups, no history scan. */
export function findNote(db: Db, ownerId: string, noteId: string): Promise<NoteRecord | undefined> {
  return db
    .selectFrom('notes as n')
    .innerJoin('note_versions as v', 'v.id', 'n.version_id')
    .select(['n.id', 'n.owner_id', 'n.title', 'v.content', 'n.version', 'n.version_id', 'n.created_at', 'n.updated_at'])
    .where('n.id', '=', noteId)
    .where('n.owner_id', '=', ownerId)
    .where('n.deleted_at', 'is', null)
    .executeTakeFirst();
}

export function findNoteVersionNumber(db: Db, ownerId: string, noteId: string): Promise<number | undefined> {
  return db
    .selectFrom('notes')
    .select('version')
    .where('id', '=', noteId)
    .where('owner_id', '=', ownerId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst()
    .then((row) => row?.version);
}

export function listNotes(db: Db, ownerId: string, page: { limit: number; offset: number } | undefined) {
  let query = db
    .selectFrom('notes')
    .select(['id', 'owner_id', 'title', 'updated_at'])
    .where('owner_id', '=', ownerId)
    .where('deleted_at', 'is', null)
    .orderBy('updated_at', 'desc')
    .orderBy('id', 'desc');
  if (page !== undefined) query = query.limit(page.limit).offset(page.offset);
  return query.execute();
}

/** Deletes a note that is not in the trash, with its history, for good. */
export async function deleteNote(db: Db, ownerId: string, noteId: string): Promise<boolean> {
  const result = await db.deleteFrom('notes')
    .where('id', '=', noteId).where('owner_id', '=', ownerId).where('deleted_at', 'is', null)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Moves a note that is not in the trash into it. */
export async function trashNote(db: Db, ownerId: string, noteId: string, now: string): Promise<boolean> {
  const result = await db.updateTable('notes').set({ deleted_at: now })
    .where('id', '=', noteId).where('owner_id', '=', ownerId).where('deleted_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Moves the note to its next version number and returns it with the new update time. The UPDATE
 * takes the row's write lock (PostgreSQL) or the database's (SQLite) until the caller's transaction
 * ends, so concurrent writers queue up and numbers never repeat or skip. With `expected`, only that
 * current version qualifies. A writer that waited for the lock may carry an older clock reading
 * than the version before it; the time then stays at that version's, so it never goes backwards.
 */
export async function advanceVersion(
  db: Db,
  change: { ownerId: string; noteId: string; versionId: string; title: Buffer; now: string; expected: number[] | undefined },
): Promise<{ version: number; updated_at: Date | string } | undefined> {
  if (change.expected?.length === 0) return undefined;
  let query = db
    .updateTable('notes')
    .set((eb) => ({
      version: eb('version', '+', 1),
      version_id: change.versionId,
      title: change.title,
      updated_at: sql<string>`case when updated_at > ${change.now} then updated_at else ${change.now} end`,
    }))
    .where('id', '=', change.noteId)
    .where('owner_id', '=', change.ownerId)
    .where('deleted_at', 'is', null);
  if (change.expected !== undefined) query = query.where('version', 'in', change.expected);
  return query.returning(['version', 'updated_at']).executeTakeFirst();
}

/**
 * One page of history, newest first. Versions run 1..current without gaps, so a page is a range of
 * version numbers: an index range scan that costs the same at any depth, unlike OFFSET.
 */
export function listVersions(db: Db, noteId: string, current: number, limit: number, offset: number) {
  const top = current - offset;
  return db
    .selectFrom('note_versions')
    .select(['id', 'title', 'version', 'created_at'])
    .where('note_id', '=', noteId)
    .where('version', '<=', top)
    .where('version', '>', top - limit)
    .orderBy('version', 'desc')
    .execute();
}

export function findVersion(db: Db, ownerId: string, noteId: string, versionId: string) {
  return db
    .selectFrom('note_versions as v')
    .innerJoin('notes as n', 'n.id', 'v.note_id')
    .select(['v.id', 'v.note_id', 'v.title', 'v.content', 'v.version', 'v.created_at'])
    .where('v.id', '=', versionId)
    .where('v.note_id', '=', noteId)
    .where('n.owner_id', '=', ownerId)
    .where('n.deleted_at', 'is', null)
    .executeTakeFirst();
}
