import { ALLOW_COLLECTION } from './dav-methods.js';
import * as attachments from '../attachments/attachments.service.js';
import type { AttachmentServices } from '../attachments/attachments.service.js';
import type { Db } from '../db/schema.js';
import { isUniqueViolation, nowIso } from '../db/values.js';
import { Errors } from '../errors.js';
import { folderNameProblem } from '../folders/folder-name.js';
import { createFolder, deleteFolder } from '../folders/folders.service.js';
import { trashNotesInFolders } from '../notes/notes.repository.js';
import { createNote, deleteNote, getNote, writeVersion } from '../notes/notes.service.js';
import { CONTENT_MAX_BYTES, TITLE_MAX_CHARACTERS } from '../notes/version-rules.js';
import { newId } from '../shared/ids.js';
import { nameKey } from './dav-path.js';
import * as repo from './dav.repository.js';
import { folderIdOf, isNoteName, titleOfName, walk, type Collection, type Entry } from './tree.js';

export interface DavServices {
  db: Db;
  attachments: AttachmentServices;
  trashDays: number;
}

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The bytes of a .md file as a note's text: exactly these bytes come back on GET. */
export function noteText(bytes: Buffer): string {
  if (bytes.length > CONTENT_MAX_BYTES) throw Errors.davNoteTooLarge();
  try {
    return decoder.decode(bytes);
  } catch {
    throw Errors.davNotUtf8();
  }
}

export function titleFor(name: string): string {
  const title = titleOfName(name);
  if ([...title].length > TITLE_MAX_CHARACTERS) throw Errors.davNoteNameTooLong();
  return title;
}

export function checkFolderName(name: string): void {
  const problem = name === name.trim() ? folderNameProblem(name) : 'a folder name must not start or end with spaces';
  if (problem !== undefined) throw Errors.davForbidden(`This name cannot be a folder's: ${problem}`);
}

export function checkFileName(name: string): void {
  if (name.length > 255) throw Errors.davFileNameTooLong();
}

/**
 * An entry's ETag, where it has one: a note's current version, a file's SHA-256 cut to 128 bits.
 * Short on purpose: neon-based clients (litmus, cadaver, davfs2) build If headers in a 200-byte
 * buffer, and two full SHA-256 tags plus a lock token overflow it.
 */
export function etagOf(entry: Entry): string | undefined {
  if (entry.kind === 'note') return `"${entry.version_id}"`;
  if (entry.kind === 'file') return `"${entry.sha256.slice(0, 32)}"`;
  return undefined;
}

/** Places a new file (not a note) under `name`. */
export async function placeFile(
  s: DavServices,
  ownerId: string,
  parent: Collection,
  name: string,
  attachmentId: string,
): Promise<string> {
  checkFileName(name);
  const now = nowIso();
  const id = newId();
  try {
    await repo.insertFile(s.db, {
      id,
      owner_id: ownerId,
      folder_id: folderIdOf(parent),
      name,
      name_key: nameKey(name),
      attachment_id: attachmentId,
      created_at: now,
      updated_at: now,
    });
  } catch (error) {
    await attachments.discardIfUnused(s.attachments, ownerId, attachmentId);
    if (isUniqueViolation(error)) throw Errors.davConflict('Another file with this name was created at the same time');
    throw error;
  }
  return id;
}

export const uploadStream = (s: DavServices, ownerId: string, name: string, body: AsyncIterable<Buffer>) =>
  attachments.upload(s.attachments, ownerId, { filename: name, mimetype: undefined, stream: body });

/**
 * PUT: a .md name is a note (a new version when the bytes changed, none when they did not; a new
 * note at a new name), any other name a file. `expectedVersion` (from If-Match) makes the note's
 * write conditional, so a change between the check and the write is still a 412.
 */
export async function put(
  s: DavServices,
  ownerId: string,
  parent: Collection,
  name: string,
  existing: Entry | undefined,
  body: AsyncIterable<Buffer>,
  readAll: () => Promise<Buffer>,
  expectedVersion: number | undefined,
): Promise<'created' | 'updated'> {
  if (existing !== undefined && (existing.kind === 'folder' || existing.kind === 'root')) {
    throw Errors.davPutCollection(ALLOW_COLLECTION);
  }
  if (existing?.kind === 'note') {
    const content = noteText(await readAll());
    const note = await getNote(s.db, ownerId, existing.id);
    if (note.content !== content) {
      await writeVersion(
        s.db,
        ownerId,
        existing.id,
        { title: note.title, content },
        expectedVersion === undefined ? undefined : [expectedVersion],
        null,
      );
    }
    return 'updated';
  }
  if (existing?.kind === 'file') {
    const replacement = await uploadStream(s, ownerId, existing.name, body);
    if (replacement.sha256 === existing.sha256) {
      await attachments.discardIfUnused(s.attachments, ownerId, replacement.id);
      return 'updated';
    }
    await repo.updateFile(s.db, ownerId, existing.id, { attachment_id: replacement.id, updated_at: nowIso() });
    await attachments.discardIfUnused(s.attachments, ownerId, existing.attachment_id);
    return 'updated';
  }
  if (isNoteName(name)) {
    const title = titleFor(name);
    await createNote(s.db, ownerId, { title, content: noteText(await readAll()), folder_id: folderIdOf(parent) });
    return 'created';
  }
  checkFileName(name);
  const attachment = await uploadStream(s, ownerId, name, body);
  await placeFile(s, ownerId, parent, name, attachment.id);
  return 'created';
}

export async function mkcol(s: DavServices, ownerId: string, parent: Collection, name: string): Promise<void> {
  checkFolderName(name);
  await createFolder(s.db, ownerId, { name, parent_id: folderIdOf(parent) });
}

/** DELETE: notes go to the trash (a folder's too, as the API's folder delete does); files and folders are gone. */
export async function remove(s: DavServices, ownerId: string, entry: Entry): Promise<void> {
  if (entry.kind === 'root') throw Errors.davForbidden('The top level cannot be deleted');
  if (entry.kind === 'note') return deleteNote(s.db, ownerId, entry.id, s.trashDays);
  if (entry.kind === 'file') {
    await repo.deleteFile(s.db, ownerId, entry.id);
    await repo.removeProperties(s.db, [entry.id]);
    await attachments.discardIfUnused(s.attachments, ownerId, entry.attachment_id);
    return;
  }
  const inside = await walk(s.db, ownerId, entry);
  await deleteFolder(s.db, ownerId, entry.id, s.trashDays, trashNotesInFolders);
  const gone = inside.filter((i) => i.kind !== 'note');
  await repo.removeProperties(s.db, [entry.id, ...gone.map((i) => i.id)]);
  for (const file of gone)
    if (file.kind === 'file') await attachments.discardIfUnused(s.attachments, ownerId, file.attachment_id);
}
