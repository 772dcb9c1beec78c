import type { Db } from '../db/schema.js';
import { notesWithUnsettledTags, notesWithoutTags, setMissingNoteTags, settleNoteTags } from './notes.repository.js';
import { encodeTags, extractTags } from '../tags/extract.js';
import { removeNoteTags, replaceNoteTags } from '../tags/tags.repository.js';

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
        const listed = row.deleted_at === null;
        if (!(await setMissingNoteTags(trx, row.id, row.version_id, encodeTags(tags), listed))) continue;
        if (row.deleted_at === null) await replaceNoteTags(trx, { noteId: row.id, ownerId: row.owner_id, tags });
        notes += 1;
      }
    });
    if (rows.length < BATCH) return { notes };
  }
}

/**
 * Settles the tags of the notes an older release wrote (notesWithUnsettledTags): during a rolling
 * upgrade its replicas keep writing after this build migrated, knowing nothing of tags — a version
 * saved without its tags, a note created without them, a note moved into the trash with its tag
 * rows left (still counted by GET /tags) or out of it without them (found by no tag) — or, the
 * previous release, without the columns that say what the tags were made for. Each such note's
 * tags are derived again from its current version and its rows written or taken out. Found by a
 * partial index that holds only such notes, so a pass with nothing to do is one index probe.
 * `notes`: those whose tags or rows were wrong; `checked`: those found right and recorded as such
 * (the first pass after the migration, and the previous release's writes).
 */
export async function settleTags(db: Db): Promise<{ notes: number; checked: number }> {
  let notes = 0;
  let checked = 0;
  for (;;) {
    const rows = await notesWithUnsettledTags(db, BATCH);
    const done = await db.transaction().execute(async (trx) => {
      let n = 0;
      for (const row of rows) {
        const tags = extractTags(row.content);
        const encoded = encodeTags(tags);
        const listed = row.deleted_at === null;
        // Written meanwhile: by this build, which settles its own, or by an older one (next pass).
        if (!(await settleNoteTags(trx, { id: row.id, versionId: row.version_id, tags: encoded, listed }))) continue;
        n += 1;
        // Listed rows are always those of `tags` (no release writes one without the other), so
        // tags that were right on the note's side of the trash leave its rows as they are: the
        // first pass after the migration records most notes without rewriting their rows.
        if (row.tags === encoded && Boolean(row.tags_listed) === listed) {
          checked += 1;
          continue;
        }
        if (listed) await replaceNoteTags(trx, { noteId: row.id, ownerId: row.owner_id, tags });
        else await removeNoteTags(trx, [row.id]);
        notes += 1;
      }
      return n;
    });
    // A batch of notes that all changed meanwhile is looked at again by the next pass, not now.
    if (rows.length < BATCH || done === 0) return { notes, checked };
  }
}
