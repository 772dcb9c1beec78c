import type { Db } from '../db/schema.js';
import { nowIso } from '../db/values.js';

/**
 * The stored Yjs state of a note's live document, or undefined. The version number it took in is
 * kept inside the state itself (the `vellum` map, collab.ts), so one column holds both.
 */
export async function loadState(db: Db, noteId: string): Promise<Uint8Array | undefined> {
  const row = await db.selectFrom('collab_documents').select('state').where('note_id', '=', noteId).executeTakeFirst();
  return row === undefined ? undefined : new Uint8Array(Buffer.from(row.state, 'base64'));
}

/** Stores the state (a foreign-key violation when the note has just been deleted). */
export async function saveState(db: Db, noteId: string, state: Uint8Array): Promise<void> {
  const now = nowIso();
  const bytes = Buffer.from(state).toString('base64');
  await db
    .insertInto('collab_documents')
    .values({ note_id: noteId, state: bytes, updated_at: now })
    .onConflict((oc) => oc.column('note_id').doUpdateSet({ state: bytes, updated_at: now }))
    .execute();
}

/**
 * Stores a first state only if none is stored yet, and answers the state stored: two instances
 * that open the same note at once both start from the one that won (two seeds of the same text
 * would be two different Yjs histories, and merged they would double the text).
 */
export async function seedState(db: Db, noteId: string, state: Uint8Array): Promise<Uint8Array | undefined> {
  await db
    .insertInto('collab_documents')
    .values({ note_id: noteId, state: Buffer.from(state).toString('base64'), updated_at: nowIso() })
    .onConflict((oc) => oc.column('note_id').doNothing())
    .execute();
  return loadState(db, noteId);
}

/**
 * The newest of the versions after `after` up to `upTo` (at most `limit` of the newest looked at)
 * whose text is exactly this one: the version a live document's text already is, though its
 * stored state does not say so.
 */
export async function newestVersionWithText(
  db: Db,
  noteId: string,
  range: { after: number; upTo: number; limit: number },
  text: { title: string; content: string },
): Promise<number | undefined> {
  const rows = await db
    .selectFrom('note_versions')
    .select(['version', 'title', 'content'])
    .where('note_id', '=', noteId)
    .where('version', '>', range.after)
    .where('version', '<=', range.upTo)
    .orderBy('version', 'desc')
    .limit(range.limit)
    .execute();
  return rows.find((row) => row.title === text.title && row.content === text.content)?.version;
}
