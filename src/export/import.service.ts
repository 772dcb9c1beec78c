import { setImmediate as nextTurn } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Db } from '../db/schema.js';
import { isForeignKeyViolation } from '../db/values.js';
import { AppError, Errors } from '../errors.js';
import { indexVersion } from '../search/search.index.js';
import { newId } from '../shared/ids.js';
import { hasVersionMetadata } from './export.repository.js';
import type { ImportDocument } from './import-runner.js';

/**
 * Creates every note of a checked document for `ownerId`, new ids, versions as given, in one
 * transaction: either all of it is imported or nothing is. Each version is indexed for search.
 * Between batches the event loop serves other requests: SQLite's statements run synchronously, and
 * a large document written in one go held every request up for seconds.
 */
export async function importNotes(db: Db, ownerId: string, document: ImportDocument): Promise<{ notes: number; versions: number }> {
  const metadata = await hasVersionMetadata(db);
  if (document.labelled && !metadata) {
    throw new AppError(400, 'invalid_import', 'Invalid import document: this server does not store version labels or restored_from yet');
  }
  try {
    await db.transaction().execute(async (trx) => {
      // The note being written: its id, its last version's id (the note row points at it), versions left.
      let note = { id: '', lastVersionId: '', left: 0 };
      for await (const batch of document.batches) {
        for (const item of batch) {
          if ('head' in item) {
            const head = item.head;
            note = { id: newId(), lastVersionId: newId(), left: head.versions };
            await trx.insertInto('notes').values({
              id: note.id, owner_id: ownerId, title: Buffer.from(head.title, 'utf8'), version: head.version, version_id: note.lastVersionId,
              created_at: head.created_at, updated_at: head.updated_at,
              // Numbers may skip (a pruned history); history pages need to know (see listVersions).
              pruned: head.version - head.versions,
            }).execute();
            continue;
          }
          const v = item.version;
          note.left -= 1;
          const id = note.left === 0 ? note.lastVersionId : newId();
          await trx.insertInto('note_versions').values({
            id, note_id: note.id, version: v.version, title: Buffer.from(v.title, 'utf8'),
            content: Buffer.from(v.content, 'utf8'), created_at: v.created_at,
          }).execute();
          if (metadata && (v.label !== null || v.restored_from !== null)) {
            await sql`update note_versions set label = ${v.label}, restored_from = ${v.restored_from} where id = ${id}`.execute(trx);
          }
          await indexVersion(trx, { ownerId, noteId: note.id, versionId: id, version: v.version, title: v.title, content: v.content });
        }
        await nextTurn();
      }
    });
  } catch (error) {
    if (isForeignKeyViolation(error)) throw Errors.userNotFound(); // the account was deleted meanwhile
    throw error;
  }
  return { notes: document.notes, versions: document.versions };
}
