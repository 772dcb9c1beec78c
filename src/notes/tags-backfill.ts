import type { Db } from '../db/schema.js';
import { notesWithoutTags, setMissingNoteTags } from './notes.repository.js';
import { encodeTags, extractTags } from '../tags/extract.js';
import { replaceNoteTags } from '../tags/tags.repository.js';

const BATCH = 100;

/**
 * Derives the tags of notes written before tags existed (their `tags` is null): a maintenance task,
 * like the search back-fill, since deriving needs this code, not SQL. New writes derive their own,
 * so after the first pass this finds nothing.
 */
export async function deriveMissingTags(db: Db): Promise<{ notes: number }> {
  let notes = 0;
  for (;;) {
    const rows = await notesWithoutTags(db, BATCH);
    await db.transaction().execute(async (trx) => {
      for (const row of rows) {
        const tags = extractTags(row.content);
        // A save since the read derived them already; its tags stand.
        if (!(await setMissingNoteTags(trx, row.id, row.version_id, encodeTags(tags)))) continue;
        if (row.deleted_at === null) await replaceNoteTags(trx, { noteId: row.id, ownerId: row.owner_id, tags });
        notes += 1;
      }
    });
    if (rows.length < BATCH) return { notes };
  }
}
