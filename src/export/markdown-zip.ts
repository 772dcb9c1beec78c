import { allAttachments } from '../attachments/attachments.repository.js';
import type { AttachmentStorage } from '../attachments/storage.js';
import { folderTree } from '../folders/folders.service.js';
import { FOLDER_MAX_DEPTH } from '../folders/folder-limits.js';
import { type PassThrough, Readable } from 'node:stream';
import yazl from 'yazl';
import type { Db } from '../db/schema.js';
import * as repo from './export.repository.js';
import { ownerNotes, turnTaker } from './export.service.js';

/**
 * The Markdown export: a zip with one file per live note, its current version with a front-matter
 * block. yazl streams: entries are declared (names only) while the archive is written, and each
 * note's content is read from the database when the archive reaches it (as fast as the client
 * reads), so memory holds one note's content at a time.
 *
 * No failure may leave this function's reach as a throw in a callback (it happened: a RangeError from
 * yazl killed the process). yazl throws synchronously only for inputs it cannot encode (an entry
 * time before 1970, a name over 65,535 bytes), which zipTime and FileNames rule out; every failure
 * it reports arrives as an 'error' event on the ZipFile, and every failure of ours (a query, a
 * callback) is caught here. Each of them destroys the returned stream with the error, which ends
 * this one response; the caller must listen for 'error' on it from the moment it has it.
 */
export function markdownZip(db: Db, ownerId: string, storage: AttachmentStorage): Readable {
  const zip = new yazl.ZipFile();
  const output = zip.outputStream as PassThrough;
  // An EventEmitter's 'error' without a listener throws: this listener is what keeps it in here.
  zip.on('error', (error: unknown) => output.destroy(toError(error)));
  const fail = (error: unknown) => output.destroy(toError(error));
  addEntries(db, ownerId, zip, output, fail, storage).catch(fail);
  return output;
}

async function addEntries(
  db: Db,
  ownerId: string,
  zip: yazl.ZipFile,
  output: PassThrough,
  fail: (error: unknown) => void,
  storage: AttachmentStorage,
): Promise<void> {
  // Folders become directories as they are: their names are valid directory names on every system
  // and unique among siblings ignoring case (src/folders/folder-name.ts). Each directory (by folder
  // id; '' is the top) names its files on its own, never as one of its subfolders. Paths are built
  // as they are written, with turns between: an old tree may be thousands of levels deep.
  const takeTurn = turnTaker();
  const tree = await folderTree(db, ownerId);
  const directories = new Map<string, FileNames>([['', new FileNames()]]);
  for (const { folder, names, leaf } of tree.walk()) {
    await takeTurn();
    if (output.destroyed) return;
    directories.set(folder.id, new FileNames());
    directories.get(folder.parent_id ?? '')?.reserve(folder.name);
    // Past the depth limit (only trees made before it) a folder with subfolders gets no entry of its
    // own: its subfolders' paths imply it, and an entry for every level made the zip grow with the
    // square of the depth (4 chains 5,000 deep: 200 MB). A folder with only notes still gets one.
    if (leaf || names.length <= FOLDER_MAX_DEPTH) zip.addEmptyDirectory(`${names.join('/')}/`);
  }
  // Files under attachments/, each as {id}-{its name}; notes link to them by relative paths.
  const files = new Map<string, string>();
  for (const file of await allAttachments(db, ownerId)) {
    const name = `${ATTACHMENTS_DIRECTORY}/${file.id}-${safeFileName(file.filename)}`;
    files.set(file.id, name);
    addStoredFile(zip, name, file, storage, fail);
  }
  // The archive moves from entry to entry on stream events, which need not leave room for other
  // requests between them: each entry's read waits its turn like the JSON export's notes.
  for await (const note of ownerNotes(db, ownerId)) {
    if (output.destroyed) return; // the client went away or the archive failed: read no further
    // A folder made after the tree was read: the note goes to the top level.
    const key = note.folder_id !== null && directories.has(note.folder_id) ? note.folder_id : '';
    const directory = key === '' ? '' : tree.pathOf(key)!;
    const name = directories.get(key)!.take(note.title);
    zip.addReadStreamLazy(
      directory === '' ? name : `${directory}/${name}`,
      { mtime: zipTime(note.updated_at) },
      (done) => {
        takeTurn()
          .then(() => noteFile(db, ownerId, note, (content) => relativeLinks(content, files, directory)))
          .then(
            (bytes) => done(null, Readable.from([bytes])),
            (error: unknown) => done(toError(error), undefined as never),
          )
          .catch(fail); // done() runs yazl's next step, which may throw
      },
    );
  }
  zip.end();
}

async function noteFile(
  db: Db,
  ownerId: string,
  note: repo.NoteHead,
  rewrite: (content: string) => string,
): Promise<Buffer> {
  const row = await repo.currentContent(db, ownerId, note.id);
  // A note deleted meanwhile still gets its file (the list was taken first), empty.
  return Buffer.from(markdownFile(note, rewrite(row?.content ?? '')), 'utf8');
}

export const ATTACHMENTS_DIRECTORY = 'attachments';

/**
 * A zip entry with an attachment's bytes, read from storage only when the archive reaches it (as
 * the notes are); a storage failure destroys the archive through `fail`.
 */
export function addStoredFile(
  zip: yazl.ZipFile,
  name: string,
  file: { storage_key: string; size: number; created_at: string },
  storage: AttachmentStorage,
  fail: (error: unknown) => void,
): void {
  zip.addReadStreamLazy(name, { mtime: zipTime(file.created_at), compress: false }, (done) => {
    try {
      const bytes = storage.get(file.storage_key, file.size);
      bytes.on('error', fail);
      done(null, bytes);
    } catch (error) {
      fail(error);
    }
  });
}
const ATTACHMENT_LINK =
  /(?:https?:\/\/[^\s()<>"']*?)?\/api\/attachments\/([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})(?![0-9a-fA-F-])/g;

/** Links to the app's attachment URLs, as paths to the zip's copies, relative to the note's directory. */
export function relativeLinks(content: string, files: ReadonlyMap<string, string>, directory: string): string {
  if (files.size === 0 || !content.includes('/api/attachments/')) return content;
  const up = directory === '' ? '' : '../'.repeat(directory.split('/').length);
  return content.replace(ATTACHMENT_LINK, (link, id: string) => {
    const name = files.get(id.toLowerCase());
    return name === undefined ? link : encodeURI(`${up}${name}`);
  });
}

/** A file name any system accepts: letters, digits, spaces, dots, dashes and underscores, at most 100 characters. */
function safeFileName(name: string): string {
  const safe = name
    .normalize('NFC')
    .replace(/[^\p{L}\p{N} ._-]/gu, '_')
    .replace(/^[ .]+|[ .]+$/g, '')
    .slice(0, 100);
  return safe === '' ? 'file' : safe;
}

const toError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

/** Front matter in YAML: JSON strings are valid YAML double-quoted scalars, so any title is safe. */
export function markdownFile(
  note: { id: string; title: string; created_at: string; updated_at: string; pinned: boolean; archived: boolean },
  content: string,
): string {
  return `---\ntitle: ${JSON.stringify(note.title)}\nid: ${note.id}\ncreated_at: ${note.created_at}\nupdated_at: ${note.updated_at}\npinned: ${note.pinned}\narchived: ${note.archived}\n---\n\n${content}`;
}

/**
 * The range a zip entry's time can carry: the DOS date field holds 1980-01-01 to 2107-12-31. yazl
 * clamps the DOS field itself but also writes the Unix time (an unsigned 32-bit field) and throws a
 * RangeError for any time before 1970. Times outside are clamped to the nearest end; the file's
 * front matter keeps the real ones.
 */
const ZIP_TIME_MIN = Date.UTC(1980, 0, 1);
const ZIP_TIME_MAX = Date.UTC(2107, 11, 31, 23, 59, 58);

export function zipTime(iso: string): Date {
  const time = Date.parse(iso);
  return new Date(Number.isNaN(time) ? ZIP_TIME_MIN : Math.min(Math.max(time, ZIP_TIME_MIN), ZIP_TIME_MAX));
}

/**
 * Characters no file system takes (Windows' list), control characters (C0, DEL and C1, U+0085
 * included) and lone surrogates (not encodable in UTF-8): each becomes "_".
 */
const UNSAFE = /[<>:"/\\|?*\p{Cc}\p{Cs}]/gu;
/** Invisible format characters (U+202E reverses what follows, U+200B hides, U+FEFF...): removed. */
const FORMAT = /\p{Cf}/gu;
/** Names Windows reserves for devices, whatever the extension. */
const RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])$/i;
/** The whole name, suffix and extension included, in UTF-8 bytes: what unzip and most file systems take (255). */
export const MAX_NAME_BYTES = 200;

/**
 * File names from titles that every OS accepts and that stay distinct on case-insensitive file
 * systems: unsafe characters become "_", format characters go, no leading/trailing dots or spaces,
 * no device names, at most 200 UTF-8 bytes with " (2)", " (3)"... on a repeat and ".md" (never a
 * split code point).
 */
export class FileNames {
  private readonly used = new Set<string>();

  /** A name already taken in this directory (a subfolder's). */
  reserve(name: string): void {
    this.used.add(name.normalize('NFC').toLowerCase());
  }

  take(title: string): string {
    let base = title.normalize('NFC').replace(FORMAT, '').replace(UNSAFE, '_').replace(/\s+/gu, ' ');
    base = trimName(base);
    if (base === '') base = 'Untitled';
    // Windows takes "con.txt" for the device too: the part before the first dot decides.
    if (RESERVED.test(base.split('.')[0]!.trim())) base = `_${base}`;
    for (let n = 1; ; n += 1) {
      const suffix = n === 1 ? '.md' : ` (${n}).md`;
      const name = trimName(cutToBytes(base, MAX_NAME_BYTES - Buffer.byteLength(suffix))) + suffix;
      const key = name.toLowerCase();
      if (!this.used.has(key)) {
        this.used.add(key);
        return name;
      }
    }
  }
}

const trimName = (name: string) => name.trim().replace(/^[. ]+|[. ]+$/g, '');

/** The longest prefix of whole code points that takes at most `max` bytes in UTF-8. */
export function cutToBytes(text: string, max: number): string {
  if (Buffer.byteLength(text) <= max) return text;
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    const size = Buffer.byteLength(char);
    if (bytes + size > max) break;
    bytes += size;
    end += char.length;
  }
  return text.slice(0, end);
}
