import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import zlib from 'node:zlib';
import yauzl from 'yauzl';
import * as attachmentsRepo from '../attachments/attachments.repository.js';
import { cleanFilename, upload, type AttachmentServices } from '../attachments/attachments.service.js';
import { detectContentType, INLINE_TYPES } from '../attachments/content-type.js';
import { Errors } from '../errors.js';
import { ARCHIVE_DOCUMENT, ARCHIVE_FILES } from './archive-zip.js';
import type { ImportDocument } from './import-runner.js';
import { IMPORT_MAX_NOTES } from './import-scan.js';
import { checkZipDirectory, type ZipBudget } from './zip-directory.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface ArchiveParts {
  /** The document's bytes, with every file's old id replaced by its new one. */
  document: Buffer;
  /** What the document's own import must do once it is written: names and types from its list. */
  finish(document: ImportDocument): Promise<void>;
  /** Undoes the files' uploads (the document was refused). */
  abandon(): Promise<void>;
}

const invalid = (detail: string) => Errors.validation(`Invalid archive: ${detail}`);

/**
 * Files one import may upload. Bytes alone do not bound what a zip of tiny files costs: identical
 * files are stored once (and a quota may be off), yet each is an upload and a row of its own — a
 * 64 MiB zip holds over 500,000 of them.
 */
export const IMPORT_MAX_FILES = 10_000;
/** Entries one zip may hold: as many notes as a document may, the files, and their folders. */
export const IMPORT_MAX_ZIP_ENTRIES = IMPORT_MAX_NOTES + IMPORT_MAX_FILES + 10_000;

/** A zip, its entry count checked from its directory's end record before anything is read. */
export function openZip(bytes: Buffer): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(bytes, { lazyEntries: true, strictFileNames: true, validateEntrySizes: true }, (error, zip) => {
      if (error !== null || zip === undefined) {
        reject(invalid('not a zip file'));
      } else if (zip.entryCount > IMPORT_MAX_ZIP_ENTRIES) {
        zip.close();
        reject(invalid(`it holds ${zip.entryCount} entries; at most ${IMPORT_MAX_ZIP_ENTRIES} are imported at once`));
      } else {
        resolve(zip);
      }
    });
  });
}

/**
 * Refuses, before anything is inflated or uploaded, a zip whose directory breaks a rule of
 * checkZipDirectory: overlapping entries, more than IMPORT_MAX_FILES files, declared sizes past the
 * importer's limits (the files together at most `maxBytes`, IMPORT_MAX_BYTES, as the zip itself).
 */
export async function checkDirectory(bytes: Buffer, budget: Omit<ZipBudget, 'maxFileCount'>): Promise<void> {
  const zip = await openZip(bytes);
  try {
    await checkZipDirectory(zip, (visit) => eachEntry(zip, visit), { ...budget, maxFileCount: IMPORT_MAX_FILES });
  } finally {
    zip.close();
  }
}

export function entryStream(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (error, stream) => {
      if (error !== null || stream === undefined) reject(invalid(`cannot read ${entry.fileName}`));
      else resolve(stream);
    });
  });
}

/**
 * An entry's bytes; a failure to inflate them (a damaged archive) is the client's 400, not our 500,
 * and so are bytes whose CRC-32 is not the one the directory gives: yauzl checks sizes, not
 * checksums, and a changed byte of a stored (uncompressed) entry was imported as it was.
 */
export async function* inflated(
  stream: Readable,
  entry: Pick<yauzl.Entry, 'crc32'>,
  name: string,
): AsyncGenerator<Buffer> {
  let crc = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      crc = zlib.crc32(chunk, crc);
      yield chunk;
    }
  } catch {
    throw invalid(`${name} is damaged`);
  }
  if (crc !== entry.crc32) throw invalid(`${name} is damaged (its checksum does not match)`);
}

/** An entry's bytes, at most `max` of them (`name` says which entry was too large). */
export async function collect(stream: AsyncIterable<Buffer>, max: number, name = ARCHIVE_DOCUMENT): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    if (size > max) throw Errors.contentTooLarge(`The archive's ${name} is larger than the import limit`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Calls `visit` with each entry in turn, the next read only once it is done; a damaged zip is a 400. */
export async function eachEntry(zip: yauzl.ZipFile, visit: (entry: yauzl.Entry) => Promise<void>): Promise<void> {
  // One listener for the archive's whole life: an 'error' with none attached would end the process.
  let damaged: ((error: Error) => void) | undefined;
  zip.on('error', () => damaged?.(invalid('the zip file is damaged')));
  for (;;) {
    const entry = await new Promise<yauzl.Entry | undefined>((resolve, reject) => {
      damaged = reject;
      zip.once('entry', resolve).once('end', () => resolve(undefined));
      zip.readEntry();
    });
    damaged = undefined;
    if (entry === undefined) return;
    zip.removeAllListeners('entry').removeAllListeners('end');
    await visit(entry);
  }
}

/**
 * An archive from GET /export?format=archive: each `attachments/{id}` is uploaded for the importer
 * with a new id (streamed into storage, with the same limits as an upload), then the document's
 * links are rewritten to the new ids, so it imports like any JSON document. The archive itself was
 * read whole (it is at most IMPORT_MAX_BYTES); entries are inflated one at a time.
 */
const isArchiveFile = (name: string) => name.startsWith(ARCHIVE_FILES) && UUID.test(name.slice(ARCHIVE_FILES.length));

const ID_SHAPE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const ID_LENGTH = 36;
const RENAME_SLICE = 256 * 1024;

/**
 * Replaces, in place, each of `renamed`'s old ids in `document` (in any case) with its new one (the
 * same length: both are UUIDs), leftmost first as one alternation of the old ids would. Each
 * UUID-shaped run is looked up; after one that is not an old id, the scan goes on from its next
 * character (an old id may start inside it). The bytes are read as latin1 (a UTF-8 character of
 * more than one byte is never a hex digit or '-'), a slice at a time with a turn of the event loop
 * between: an alternation of 10,000 ids run over the whole document held the loop 2.4 s (review of #37).
 */
async function renameIds(document: Buffer, renamed: ReadonlyMap<string, string>): Promise<void> {
  const pattern = new RegExp(ID_SHAPE);
  for (let from = 0; from < document.length; ) {
    const end = Math.min(document.length, from + RENAME_SLICE);
    // An id starting before `end` may run on past it.
    const text = document.toString('latin1', from, Math.min(document.length, end + ID_LENGTH - 1));
    let next = end;
    pattern.lastIndex = 0;
    for (let match = pattern.exec(text); match !== null && from + match.index < end; match = pattern.exec(text)) {
      const id = renamed.get(match[0].toLowerCase());
      if (id === undefined) {
        pattern.lastIndex = match.index + 1;
        continue;
      }
      document.write(id, from + match.index, ID_LENGTH, 'latin1');
      next = Math.max(next, from + match.index + ID_LENGTH);
    }
    from = next;
    await nextTurn();
  }
}

/**
 * A turn of the event loop every BREATHER_EVERY statements of a loop over an archive's files. On
 * SQLite each statement answers without leaving the turn (better-sqlite3 is synchronous), so the
 * 1,000 deletes that take back a refused archive's files were one turn of ~190 ms CPU.
 */
const BREATHER_EVERY = 50;
const breather = async (i: number) => {
  if (i % BREATHER_EVERY === BREATHER_EVERY - 1) await nextTurn();
};

export async function readArchive(
  s: AttachmentServices,
  ownerId: string,
  bytes: Buffer,
  maxDocumentBytes: number,
): Promise<ArchiveParts> {
  await checkDirectory(bytes, {
    kindOf: (name) => (name === ARCHIVE_DOCUMENT ? 'text' : isArchiveFile(name) ? 'file' : 'skip'),
    maxTextEntry: maxDocumentBytes,
    maxText: maxDocumentBytes,
    maxFileEntry: s.maxBytes,
    maxFiles: maxDocumentBytes,
  });
  const zip = await openZip(bytes);
  const renamed = new Map<string, string>();
  let document: Buffer | undefined;
  const uploaded: string[] = [];
  const abandon = async () => {
    for (const [i, id] of uploaded.entries()) {
      await attachmentsRepo.deleteAttachment(s.db, ownerId, id).catch(() => undefined);
      await breather(i);
    }
  };
  try {
    await eachEntry(zip, async (entry) => {
      if (entry.fileName === ARCHIVE_DOCUMENT) {
        document = await collect(inflated(await entryStream(zip, entry), entry, entry.fileName), maxDocumentBytes);
      } else if (isArchiveFile(entry.fileName)) {
        const oldId = entry.fileName.slice(ARCHIVE_FILES.length).toLowerCase();
        const created = await upload(s, ownerId, {
          filename: oldId,
          mimetype: undefined,
          stream: inflated(await entryStream(zip, entry), entry, entry.fileName),
        });
        uploaded.push(created.id);
        renamed.set(oldId, created.id);
      }
    });
    zip.close();
    if (document === undefined) throw invalid(`it has no ${ARCHIVE_DOCUMENT}`);
  } catch (error) {
    zip.close();
    await abandon();
    throw error;
  }
  if (renamed.size > 0) await renameIds(document, renamed);
  return {
    document,
    abandon,
    async finish(imported) {
      const ours = new Set(renamed.values());
      for (const [i, file] of imported.attachments.entries()) {
        await breather(i);
        if (ours.has(file.id.toLowerCase())) {
          // A type recognised from the bytes stands; otherwise the document's (as an upload's own would).
          const declared = detectContentType(Buffer.alloc(0), file.content_type);
          await attachmentsRepo.renameAttachment(
            s.db,
            ownerId,
            file.id.toLowerCase(),
            cleanFilename(file.filename),
            declared,
            INLINE_TYPES,
          );
        }
      }
    },
  };
}

export function documentStream(parts: ArchiveParts): Readable {
  return Readable.from([parts.document]);
}
