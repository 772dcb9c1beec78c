import { sql } from 'kysely';
import type { Db } from '../db/schema.js';
import { decodeTags, searchableTags } from './extract.js';

/**
 * The rows a note can be found by (`note_tags`). Kept only for notes outside the trash: the trash
 * takes them out and a restore puts them back from `notes.tags`, so counting never joins the notes.
 */
export async function replaceNoteTags(
  db: Db,
  note: { noteId: string; ownerId: string; tags: readonly string[] },
): Promise<void> {
  await db.deleteFrom('note_tags').where('note_id', '=', note.noteId).execute();
  await insertNoteTags(db, note);
}

export async function insertNoteTags(
  db: Db,
  note: { noteId: string; ownerId: string; tags: readonly string[] },
): Promise<void> {
  const rows = searchableTags(note.tags).map((tag) => ({ note_id: note.noteId, owner_id: note.ownerId, tag }));
  // Bound parameters per statement stay well under both drivers' limits.
  for (let i = 0; i < rows.length; i += 300) {
    await db
      .insertInto('note_tags')
      .values(rows.slice(i, i + 300))
      .execute();
  }
}

/** Into the trash: the notes are no longer found by their tags. */
export async function removeNoteTags(db: Db, noteIds: readonly string[]): Promise<void> {
  for (let i = 0; i < noteIds.length; i += 500) {
    await db
      .deleteFrom('note_tags')
      .where('note_id', 'in', noteIds.slice(i, i + 500))
      .execute();
  }
}

/** Out of the trash: the note's tag rows again, from its stored tags. */
export async function restoreNoteTags(db: Db, ownerId: string, noteId: string): Promise<void> {
  const row = await db
    .selectFrom('notes')
    .select('tags')
    .where('id', '=', noteId)
    .where('owner_id', '=', ownerId)
    .executeTakeFirst();
  if (row === undefined) return;
  await replaceNoteTags(db, { noteId, ownerId, tags: decodeTags(row.tags) });
}

/** GET /tags: every tag of the caller's notes outside the trash, with how many notes it finds. */
export async function countTags(db: Db, ownerId: string): Promise<Array<{ name: string; count: number }>> {
  const rows = await db
    .selectFrom('note_tags')
    .select(['tag as name', sql<number>`count(*)`.as('count')])
    .where('owner_id', '=', ownerId)
    .groupBy('tag')
    .orderBy('tag')
    .execute();
  return rows.map((row) => ({ name: row.name, count: Number(row.count) }));
}
