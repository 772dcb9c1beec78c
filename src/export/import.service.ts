import { sql } from 'kysely';
import type { Db } from '../db/schema.js';
import { isForeignKeyViolation } from '../db/values.js';
import { AppError, Errors } from '../errors.js';
import { indexVersion } from '../search/search.index.js';
import { newId } from '../shared/ids.js';
import { hasVersionMetadata } from './export.repository.js';
import type { ImportNote } from './import.validate.js';

/**
 * Creates every note of a validated document for `ownerId`, new ids, versions as given, in one
 * transaction: either all of it is imported or nothing is. Each version is indexed for search.
 */
export async function importNotes(db: Db, ownerId: string, notes: ImportNote[]): Promise<{ notes: number; versions: number }> {
  const metadata = await hasVersionMetadata(db);
  const labelled = notes.some((note) => note.versions.some((v) => v.label !== null || v.restored_from !== null));
  if (labelled && !metadata) {
    throw new AppError(400, 'invalid_import', 'Invalid import document: this server does not store version labels or restored_from yet');
  }
  let versions = 0;
  try {
    await db.transaction().execute(async (trx) => {
      for (const note of notes) {
        const noteId = newId();
        const ids = note.versions.map(() => newId());
        const last = note.versions.at(-1)!;
        await trx.insertInto('notes').values({
          id: noteId, owner_id: ownerId, title: Buffer.from(last.title, 'utf8'), version: last.version, version_id: ids.at(-1)!,
          created_at: note.created_at, updated_at: last.created_at,
          // Numbers may skip (a pruned history); history pages need to know (see listVersions).
          pruned: last.version - note.versions.length,
        }).execute();
        for (let i = 0; i < note.versions.length; i += 1) {
          const v = note.versions[i]!;
          await trx.insertInto('note_versions').values({
            id: ids[i]!, note_id: noteId, version: v.version, title: Buffer.from(v.title, 'utf8'),
            content: Buffer.from(v.content, 'utf8'), created_at: v.created_at,
          }).execute();
          if (metadata && (v.label !== null || v.restored_from !== null)) {
            await sql`update note_versions set label = ${v.label}, restored_from = ${v.restored_from} where id = ${ids[i]!}`.execute(trx);
          }
          await indexVersion(trx, { ownerId, noteId, versionId: ids[i]!, version: v.version, title: v.title, content: v.content });
        }
        versions += note.versions.length;
      }
    });
  } catch (error) {
    if (isForeignKeyViolation(error)) throw Errors.userNotFound(); // the account was deleted meanwhile
    throw error;
  }
  return { notes: notes.length, versions };
}
