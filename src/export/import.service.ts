import { linkedAttachments, recordReferences } from '../attachments/references.js';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { inTransaction, noteChanged } from '../db/effects.js';
import type { Db } from '../db/schema.js';
import { isForeignKeyViolation, isUniqueViolation } from '../db/values.js';
import { Errors } from '../errors.js';
import * as notes from '../notes/notes.repository.js';
import { indexVersion } from '../search/search.index.js';
import { newId } from '../shared/ids.js';
import { importFolders } from '../folders/folders.service.js';
import { decodeTags } from '../tags/extract.js';
import { insertNoteTags } from '../tags/tags.repository.js';
import { hasVersionMetadata } from './export.repository.js';
import type { ImportDocument } from './import-runner.js';

/**
 * Creates every note of a checked document for `ownerId`, new ids, versions as given, in one
 * transaction: either all of it is imported or nothing is. Each version is indexed for search.
 * Between batches the event loop serves other requests: SQLite's statements run synchronously, and
 * a large document written in one go held every request up for seconds.
 */
/**
 * What import does with a note the caller already has (notes.repository findImportedTwin: the
 * same export imported again): `copy` imports it again beside the first, `skip` leaves it out,
 * `ask` imports nothing and answers 409 with how many there are, so that a client can ask.
 */
export type ExistingNotes = 'copy' | 'skip' | 'ask';

export async function importNotes(
  db: Db,
  ownerId: string,
  document: ImportDocument,
  existing: ExistingNotes = 'copy',
): Promise<{ notes: number; versions: number; skipped?: number }> {
  const metadata = await hasVersionMetadata(db);
  if (document.labelled && !metadata) {
    throw Errors.invalidImport('this server does not store version labels or restored_from yet');
  }
  const counts = { notes: 0, versions: 0, skipped: 0 };
  try {
    await inTransaction(db, async (trx) => {
      // The note being written: its id, its last version's id (the note row points at it), versions
      // left; `skip` while the versions of a note that is already here go by.
      let note = { id: '', lastVersionId: '', left: 0, skip: false };
      // Notes this import made: a twin among them is another note of the document, not a repeat.
      const made = new Set<string>();
      // Folders by path, created once (or found among the importer's own, ignoring case), all before
      // any note: the document's list holds every note's folder too (validateImport).
      const folderIds = await importFolders(trx, ownerId, document.folders);
      const folderOf = async (path: string) =>
        folderIds.get(path) ?? (await importFolders(trx, ownerId, [path])).get(path)!;
      for await (const batch of document.batches) {
        for (const item of batch) {
          if ('head' in item) {
            const head = item.head;
            if (existing !== 'copy') {
              const twin =
                head.sourceId === undefined
                  ? await notes.findImportedTwin(trx, ownerId, {
                      title: head.title,
                      createdAt: head.created_at,
                      updatedAt: head.updated_at,
                      version: head.version,
                      versions: head.versions,
                    })
                  : await notes.findSameNote(trx, ownerId, {
                      id: head.sourceId,
                      title: head.title,
                      createdAt: head.created_at,
                    });
              if (twin !== undefined && !made.has(twin)) {
                note = { id: '', lastVersionId: '', left: head.versions, skip: true };
                counts.skipped += 1;
                continue;
              }
            }
            note = { id: newId(), lastVersionId: newId(), left: head.versions, skip: false };
            made.add(note.id);
            counts.notes += 1;
            await notes.insertImportedNote(trx, {
              id: note.id,
              ownerId,
              title: head.title,
              version: head.version,
              versionId: note.lastVersionId,
              createdAt: head.created_at,
              updatedAt: head.updated_at,
              versions: head.versions,
              folderId: head.folder === null ? null : await folderOf(head.folder),
              pinned: head.pinned,
              archived: head.archived,
              tags: head.tags,
            });
            await insertNoteTags(trx, { noteId: note.id, ownerId, tags: decodeTags(head.tags) });
            // Told once the whole import has committed; nothing if it rolls back.
            noteChanged(trx, { type: 'note.created', noteId: note.id });
            continue;
          }
          const v = item.version;
          note.left -= 1;
          if (note.skip) continue;
          counts.versions += 1;
          const id = note.left === 0 ? note.lastVersionId : newId();
          await notes.insertImportedVersion(
            trx,
            {
              id,
              noteId: note.id,
              version: v.version,
              title: v.title,
              content: v.content,
              createdAt: v.created_at,
              label: v.label,
              restoredFrom: v.restored_from,
              authorId: ownerId,
            },
            metadata,
          );
          await recordReferences(trx, ownerId, id, linkedAttachments(v.content));
          await indexVersion(trx, {
            ownerId,
            noteId: note.id,
            versionId: id,
            version: v.version,
            title: v.title,
            content: v.content,
          });
        }
        await nextTurn();
      }
      // Thrown inside the transaction: nothing of it stays.
      if (existing === 'ask' && counts.skipped > 0) throw Errors.importExisting(counts.skipped);
    });
  } catch (error) {
    if (isForeignKeyViolation(error)) throw Errors.userNotFound(); // the account was deleted meanwhile
    // Another request created a folder this import was creating: nothing was written; again finds it.
    if (isUniqueViolation(error)) throw Errors.importRace();
    throw error;
  }
  // The answer of the contract's import is {notes, versions}; `skipped` comes only when asked to look.
  return existing === 'copy' ? { notes: counts.notes, versions: counts.versions } : counts;
}
