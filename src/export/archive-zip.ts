import type { PassThrough, Readable } from 'node:stream';
import yazl from 'yazl';
import { allAttachments } from '../attachments/attachments.repository.js';
import type { AttachmentStorage } from '../attachments/storage.js';
import type { Db } from '../db/schema.js';
import { exportDocument } from './export.service.js';
import { addStoredFile, zipTime } from './markdown-zip.js';

/** The archive's two parts: the document, and each file under its id (POST /api/import reads both). */
export const ARCHIVE_DOCUMENT = 'vellum-export.json';
export const ARCHIVE_FILES = 'attachments/';

/**
 * GET /export?format=archive: the JSON export and every attachment's bytes, streamed (yazl reads
 * each entry when the archive reaches it). Failures destroy the returned stream, as markdownZip's.
 */
export function archiveZip(
  db: Db,
  owner: { id: string; username: string },
  now: Date,
  storage: AttachmentStorage,
): Readable {
  const zip = new yazl.ZipFile();
  const output = zip.outputStream as PassThrough;
  const fail = (error: unknown) => output.destroy(error instanceof Error ? error : new Error(String(error)));
  zip.on('error', fail);
  (async () => {
    const document = exportDocument(db, owner, now);
    document.on('error', fail);
    zip.addReadStream(document, ARCHIVE_DOCUMENT, { mtime: zipTime(now.toISOString()), compress: true });
    for (const file of await allAttachments(db, owner.id)) {
      addStoredFile(zip, `${ARCHIVE_FILES}${file.id}`, file, storage, fail);
    }
    zip.end();
  })().catch(fail);
  return output;
}
