import type { Db } from '../db/schema.js';
import { AppError, Errors } from '../errors.js';
import { extractTags } from '../tags/extract.js';
import type { DiffRunner } from './diff-runner.js';
import { type Conflict, mergeTitle } from './merge.js';
import * as repo from './notes.repository.js';
import { type Note, addVersion, checkText, getNote, writeVersion } from './notes.service.js';

/** A save with `?merge=true`: as a plain save (204) or merged with the current version (201, the note). */
export type MergingSave = { merged: false; version: number } | { merged: true; note: Note };

const isVersionMismatch = (error: unknown) => error instanceof AppError && error.code === 'version_mismatch';

/**
 * POST /notes/{id}/versions?merge=true (docs/api.md, Notes). While If-Match names the current
 * version (or is absent or `*`) this is the plain save, answered as without `merge`. When it is
 * stale, the body is merged three ways with what happened since — base: the newest version If-Match
 * names that the note has had and still has; theirs: the current version; ours: the body — and the
 * result saved as the next version, on the one save path (writeVersion: author, tags, references,
 * search). Overlapping changes are 409 `merge_conflict` and save nothing.
 *
 * The merge is computed against the current version as read, and saved with that version as its
 * own If-Match: a save that lands in between makes it 412, and then it is merged once more against
 * the newer version; a second loss is answered 412 `version_mismatch` (the client may send the same
 * request again). `checkpoint` (tests only) pauses between the read and the save.
 */
export async function addVersionMerging(
  db: Db,
  runner: DiffRunner,
  ownerId: string,
  noteId: string,
  input: { title: string; content: string },
  expected: number[] | undefined,
  authorId: string,
  checkpoint?: (step: string) => Promise<void>,
): Promise<MergingSave> {
  try {
    return { merged: false, version: await addVersion(db, ownerId, noteId, input, expected, authorId, checkpoint) };
  } catch (error) {
    if (expected === undefined || !isVersionMismatch(error)) throw error;
  }
  for (let attempt = 1; ; attempt += 1) {
    const current = await getNote(db, ownerId, noteId);
    // Tags naming a later version than the current one never existed; a pruned one is gone. Either
    // way there is no base, and the answer is the 412 of a plain save.
    const known = expected.filter((v) => v < current.version);
    const base =
      known.length === 0 ? undefined : await repo.findVersionByNumber(db, ownerId, noteId, Math.max(...known));
    if (base === undefined) throw Errors.versionMismatch(current.version);

    const conflicts: Conflict[] = [];
    const title = mergeTitle(base.title, input.title, current.title);
    if (!title.merged) conflicts.push(title.conflict);
    const content = await runner.merge(base.content, input.content, current.content);
    if (!content.merged) conflicts.push(...content.conflicts);
    if (!title.merged || !content.merged) throw Errors.mergeConflict(current.version, conflicts);
    checkText(content.text);

    await checkpoint?.('notes:merge-read');
    try {
      const merged = { title: title.title, content: content.text };
      const written = await writeVersion(db, ownerId, noteId, merged, [current.version], null, authorId);
      return {
        merged: true,
        note: {
          ...current,
          ...merged,
          version: written.version,
          version_id: written.versionId,
          updated_at: written.updatedAt,
          tags: extractTags(merged.content),
        },
      };
    } catch (error) {
      if (attempt === 2 || !isVersionMismatch(error)) throw error;
    }
  }
}
