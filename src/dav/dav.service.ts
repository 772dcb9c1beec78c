import { Readable } from 'node:stream';
import * as attachments from '../attachments/attachments.service.js';
import type { AttachmentServices } from '../attachments/attachments.service.js';
import type { Db } from '../db/schema.js';
import { isUniqueViolation, nowIso } from '../db/values.js';
import { AppError } from '../errors.js';
import { folderNameProblem } from '../folders/folder-name.js';
import { createFolder, deleteFolder, requireRoomForCopy, requireRoomForMove, updateFolder } from '../folders/folders.service.js';
import { trashNotesInFolders } from '../notes/notes.repository.js';
import { createNote, deleteNote, fileNote, getNote, writeVersion } from '../notes/notes.service.js';
import { CONTENT_MAX_BYTES, TITLE_MAX_CHARACTERS } from '../notes/version-rules.js';
import { newId } from '../shared/ids.js';
import { nameKey, type Segments } from './dav-path.js';
import * as repo from './dav.repository.js';
import { folderIdOf, isNoteName, listChildren, noteFileName, titleOfName, walk, type Collection, type Entry } from './tree.js';

export interface DavServices {
  db: Db;
  attachments: AttachmentServices;
  trashDays: number;
}

export const conflict = (detail: string) => new AppError(409, 'dav_conflict', detail);
const forbidden = (detail: string) => new AppError(403, 'dav_forbidden', detail);
const notUtf8 = () => new AppError(415, 'not_utf8', 'A .md file is a note and must be UTF-8 text');
export const notesTooLarge = () => new AppError(413, 'content_too_large', `A .md file is a note and must be at most ${CONTENT_MAX_BYTES} bytes (1 MiB)`);

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The bytes of a .md file as a note's text: exactly these bytes come back on GET. */
export function noteText(bytes: Buffer): string {
  if (bytes.length > CONTENT_MAX_BYTES) throw notesTooLarge();
  try {
    return decoder.decode(bytes);
  } catch {
    throw notUtf8();
  }
}

function titleFor(name: string): string {
  const title = titleOfName(name);
  if ([...title].length > TITLE_MAX_CHARACTERS) throw new AppError(400, 'invalid_dav_name', `A note's name must be at most ${TITLE_MAX_CHARACTERS} characters before .md`);
  return title;
}

function checkFolderName(name: string): void {
  const problem = name === name.trim() ? folderNameProblem(name) : 'a folder name must not start or end with spaces';
  if (problem !== undefined) throw forbidden(`This name cannot be a folder's: ${problem}`);
}

function checkFileName(name: string): void {
  if (name.length > 255) throw new AppError(400, 'invalid_dav_name', 'A file name must be at most 255 characters');
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

/** The whole content of a file or note (for a COPY or a MOVE that changes its kind). */
async function bytesOf(s: DavServices, ownerId: string, entry: Entry): Promise<Buffer> {
  if (entry.kind === 'note') return Buffer.from((await getNote(s.db, ownerId, entry.id)).content, 'utf8');
  if (entry.kind !== 'file') throw forbidden('A collection has no content');
  const row = await attachments.find(s.attachments, ownerId, entry.attachment_id);
  const chunks: Buffer[] = [];
  for await (const chunk of attachments.open(s.attachments, row.storage_key, Number(row.size))) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Places a new file (not a note) under `name`. */
async function placeFile(s: DavServices, ownerId: string, parent: Collection, name: string, attachmentId: string): Promise<string> {
  checkFileName(name);
  const now = nowIso();
  const id = newId();
  try {
    await repo.insertFile(s.db, { id, owner_id: ownerId, folder_id: folderIdOf(parent), name, name_key: nameKey(name), attachment_id: attachmentId, created_at: now, updated_at: now });
  } catch (error) {
    await attachments.discardIfUnused(s.attachments, ownerId, attachmentId);
    if (isUniqueViolation(error)) throw conflict('Another file with this name was created at the same time');
    throw error;
  }
  return id;
}

const uploadStream = (s: DavServices, ownerId: string, name: string, body: AsyncIterable<Buffer>) =>
  attachments.upload(s.attachments, ownerId, { filename: name, mimetype: undefined, stream: body });

/**
 * PUT: a .md name is a note (a new version when the bytes changed, none when they did not; a new
 * note at a new name), any other name a file. `expectedVersion` (from If-Match) makes the note's
 * write conditional, so a change between the check and the write is still a 412.
 */
export async function put(
  s: DavServices, ownerId: string, parent: Collection, name: string, existing: Entry | undefined, body: AsyncIterable<Buffer>,
  readAll: () => Promise<Buffer>, expectedVersion: number | undefined,
): Promise<'created' | 'updated'> {
  if (existing !== undefined && (existing.kind === 'folder' || existing.kind === 'root')) {
    throw new AppError(405, 'method_not_allowed', 'A collection cannot be written with PUT', {}, { allow: ALLOW_COLLECTION });
  }
  if (existing?.kind === 'note') {
    const content = noteText(await readAll());
    const note = await getNote(s.db, ownerId, existing.id);
    if (note.content !== content) {
      await writeVersion(s.db, ownerId, existing.id, { title: note.title, content }, expectedVersion === undefined ? undefined : [expectedVersion], null);
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

export const ALLOW_COLLECTION = 'OPTIONS, GET, HEAD, DELETE, PROPFIND, PROPPATCH, COPY, MOVE, LOCK, UNLOCK';

export async function mkcol(s: DavServices, ownerId: string, parent: Collection, name: string): Promise<void> {
  checkFolderName(name);
  await createFolder(s.db, ownerId, { name, parent_id: folderIdOf(parent) });
}

/** DELETE: notes go to the trash (a folder's too, as the API's folder delete does); files and folders are gone. */
export async function remove(s: DavServices, ownerId: string, entry: Entry): Promise<void> {
  if (entry.kind === 'root') throw forbidden('The top level cannot be deleted');
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
  for (const file of gone) if (file.kind === 'file') await attachments.discardIfUnused(s.attachments, ownerId, file.attachment_id);
}

/**
 * MOVE. A note, file or folder moved to a name of its own kind keeps its id (and a note its
 * history: a new name is a new title, so a new version with the same text). A file moved onto an
 * existing note becomes that note's next version (editors save to a temporary file and rename it
 * over the original); any other change of kind is a copy and a delete.
 */
export async function move(
  s: DavServices, ownerId: string, source: Entry, parent: Collection, name: string, existing: Entry | undefined,
): Promise<void> {
  if (source.kind === 'root') throw forbidden('The top level cannot be moved');
  if (existing?.kind === 'note' && source.kind === 'file') {
    const content = noteText(await bytesOf(s, ownerId, source));
    const note = await getNote(s.db, ownerId, existing.id);
    if (note.content !== content) await writeVersion(s.db, ownerId, existing.id, { title: note.title, content }, undefined, null);
    await remove(s, ownerId, source);
    return;
  }
  // Refused for depth before the destination's resource is replaced (updateFolder checks again under the lock).
  if (source.kind === 'folder') await requireRoomForMove(s.db, ownerId, source.id, folderIdOf(parent));
  if (existing !== undefined && existing.id !== source.id) await remove(s, ownerId, existing);
  const folderId = folderIdOf(parent);
  if (source.kind === 'folder') {
    checkFolderName(name);
    await updateFolder(s.db, ownerId, source.id, { name, parent_id: folderId });
    return;
  }
  if (source.kind === 'note' && isNoteName(name)) {
    const note = await getNote(s.db, ownerId, source.id);
    if (noteFileName(note.title) !== name) await writeVersion(s.db, ownerId, source.id, { title: titleFor(name), content: note.content }, undefined, null);
    if (note.folder_id !== folderId) await fileNote(s.db, ownerId, source.id, { folder_id: folderId });
    return;
  }
  if (source.kind === 'file' && !isNoteName(name)) {
    checkFileName(name);
    try {
      await repo.updateFile(s.db, ownerId, source.id, { folder_id: folderId, name, name_key: nameKey(name), updated_at: nowIso() });
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict('Another file with this name was created at the same time');
      throw error;
    }
    return;
  }
  const copied = await copyOne(s, ownerId, source, parent, name);
  await repo.copyProperties(s.db, ownerId, source.id, copied);
  await remove(s, ownerId, source);
}

/** A copy of one note, file or folder (without what is inside) at `name`: the new resource's id. */
async function copyOne(s: DavServices, ownerId: string, source: Entry, parent: Collection, name: string): Promise<string> {
  const folderId = folderIdOf(parent);
  if (source.kind === 'folder' || source.kind === 'root') {
    checkFolderName(name);
    return (await createFolder(s.db, ownerId, { name, parent_id: folderId })).id;
  }
  if (isNoteName(name)) {
    const content = noteText(await bytesOf(s, ownerId, source));
    return (await createNote(s.db, ownerId, { title: titleFor(name), content, folder_id: folderId })).id;
  }
  checkFileName(name);
  const attachment = source.kind === 'file'
    ? await attachments.duplicate(s.attachments, ownerId, source.attachment_id, name)
    : await uploadStream(s, ownerId, name, Readable.from([await bytesOf(s, ownerId, source)]));
  return placeFile(s, ownerId, parent, name, attachment.id);
}

/** COPY: the resource (and with depth infinity everything in a folder) as new notes, files and folders, dead properties included. */
export async function copy(
  s: DavServices, ownerId: string, source: Entry, sourcePath: Segments, parent: Collection, name: string, existing: Entry | undefined, deep: boolean,
): Promise<void> {
  // A folder's whole tree is checked against the folder limits first, so that a copy too deep or too
  // large is refused before any of it is made (each folder is checked again as it is created).
  if (deep && source.kind === 'folder') await requireRoomForCopy(s.db, ownerId, source.id, folderIdOf(parent));
  await copyTree(s, ownerId, source, sourcePath, parent, name, existing, deep);
}

async function copyTree(
  s: DavServices, ownerId: string, source: Entry, sourcePath: Segments, parent: Collection, name: string, existing: Entry | undefined, deep: boolean,
): Promise<void> {
  if (existing !== undefined) await remove(s, ownerId, existing);
  const id = await copyOne(s, ownerId, source, parent, name);
  await repo.copyProperties(s.db, ownerId, source.id, id);
  if (!deep || (source.kind !== 'folder' && source.kind !== 'root')) return;
  const target: Collection = { kind: 'folder', id, name, created_at: '', updated_at: '' };
  for (const child of await listChildren(s.db, ownerId, folderIdOf(source))) {
    await copyTree(s, ownerId, child, [...sourcePath, child.name], target, child.name, undefined, true);
  }
}
