import { Readable } from 'node:stream';
import * as attachments from '../attachments/attachments.service.js';
import { isUniqueViolation, nowIso } from '../db/values.js';
import { Errors } from '../errors.js';
import { createFolder, requireRoomForCopy, requireRoomForMove, updateFolder } from '../folders/folders.service.js';
import { createNote, fileNote, getNote, writeVersion } from '../notes/notes.service.js';
import { lockPathOf, nameKey, pathOfUrl, segmentsOf, type Segments } from './dav-path.js';
import { checkMatch, checkWrite, dropLocksAt } from './dav-conditions.js';
import type { DavHeaders } from './dav-request.js';
import * as repo from './dav.repository.js';
import {
  checkFileName,
  checkFolderName,
  noteText,
  placeFile,
  remove,
  titleFor,
  uploadStream,
  type DavServices,
} from './dav.service.js';
import {
  folderIdOf,
  isCollection,
  isNoteName,
  listChildren,
  locate,
  noteFileName,
  type Collection,
  type Entry,
} from './tree.js';

/**
 * COPY and MOVE to the Destination header's path: 201 when nothing was there, 204 when something
 * was replaced. A MOVE takes the locks on what it moved away with it.
 */
export async function davCopyMove(
  s: DavServices,
  ownerId: string,
  segments: Segments,
  headers: DavHeaders,
  moving: boolean,
): Promise<201 | 204> {
  const located = await locate(s.db, ownerId, segments);
  const source = located.entry;
  if (source === undefined) throw Errors.davNotFound();
  if (headers.destination === undefined) throw Errors.invalidDavRequest('COPY and MOVE need a Destination header');
  const target = segmentsOf(pathOfUrl(headers.destination));
  const from = lockPathOf(segments);
  const to = lockPathOf(target);
  if (target.join('/') === segments.join('/')) throw Errors.davForbidden('The destination is the source');
  if (isCollection(source) && (from === '' || to.startsWith(`${from}/`)))
    throw Errors.davForbidden('A folder cannot be copied or moved into itself');
  const depth = headers.depth;
  if (isCollection(source) && depth !== undefined && depth !== 'infinity' && (moving || depth !== '0')) {
    throw Errors.invalidDavRequest('Depth must be infinity (or 0 for COPY)');
  }
  const dest = await locate(s.db, ownerId, target);
  if (dest.parent === undefined) throw Errors.davNoParent();
  const existing = dest.entry !== undefined && dest.entry.id !== source.id ? dest.entry : undefined;
  const overwrite = (headers.overwrite ?? 'T').trim().toUpperCase();
  if (overwrite !== 'T' && overwrite !== 'F') throw Errors.invalidDavRequest('Overwrite must be T or F');
  if (existing !== undefined && overwrite === 'F') throw Errors.davPreconditionFailed();
  checkMatch(headers, source, false);
  const locks = await checkWrite(s.db, headers, ownerId, located, [
    { segments: target, tree: true },
    ...(moving ? [{ segments, tree: true }] : []),
  ]);
  const status = existing === undefined ? 201 : 204;
  if (moving) {
    await move(s, ownerId, source, dest.parent, target.at(-1)!, dest.entry);
    await dropLocksAt(s.db, ownerId, locks, from);
    return status;
  }
  await copy(s, ownerId, source, segments, dest.parent, target.at(-1)!, existing, depth !== '0');
  return status;
}

/** The whole content of a file or note (for a COPY or a MOVE that changes its kind). */
async function bytesOf(s: DavServices, ownerId: string, entry: Entry): Promise<Buffer> {
  if (entry.kind === 'note') return Buffer.from((await getNote(s.db, ownerId, entry.id)).content, 'utf8');
  if (entry.kind !== 'file') throw Errors.davForbidden('A collection has no content');
  const row = await attachments.find(s.attachments, ownerId, entry.attachment_id);
  const chunks: Buffer[] = [];
  for await (const chunk of attachments.open(s.attachments, row.storage_key, Number(row.size)))
    chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * MOVE. A note, file or folder moved to a name of its own kind keeps its id (and a note its
 * history: a new name is a new title, so a new version with the same text). A file moved onto an
 * existing note becomes that note's next version (editors save to a temporary file and rename it
 * over the original); any other change of kind is a copy and a delete.
 */
async function move(
  s: DavServices,
  ownerId: string,
  source: Entry,
  parent: Collection,
  name: string,
  existing: Entry | undefined,
): Promise<void> {
  if (source.kind === 'root') throw Errors.davForbidden('The top level cannot be moved');
  if (existing?.kind === 'note' && source.kind === 'file') {
    const content = noteText(await bytesOf(s, ownerId, source));
    const note = await getNote(s.db, ownerId, existing.id);
    if (note.content !== content)
      await writeVersion(s.db, ownerId, existing.id, { title: note.title, content }, undefined, null);
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
    if (noteFileName(note.title) !== name)
      await writeVersion(s.db, ownerId, source.id, { title: titleFor(name), content: note.content }, undefined, null);
    if (note.folder_id !== folderId) await fileNote(s.db, ownerId, source.id, { folder_id: folderId });
    return;
  }
  if (source.kind === 'file' && !isNoteName(name)) {
    checkFileName(name);
    try {
      await repo.updateFile(s.db, ownerId, source.id, {
        folder_id: folderId,
        name,
        name_key: nameKey(name),
        updated_at: nowIso(),
      });
    } catch (error) {
      if (isUniqueViolation(error))
        throw Errors.davConflict('Another file with this name was created at the same time');
      throw error;
    }
    return;
  }
  const copied = await copyOne(s, ownerId, source, parent, name);
  await repo.copyProperties(s.db, ownerId, source.id, copied);
  await remove(s, ownerId, source);
}

/** A copy of one note, file or folder (without what is inside) at `name`: the new resource's id. */
async function copyOne(
  s: DavServices,
  ownerId: string,
  source: Entry,
  parent: Collection,
  name: string,
): Promise<string> {
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
  const attachment =
    source.kind === 'file'
      ? await attachments.duplicate(s.attachments, ownerId, source.attachment_id, name)
      : await uploadStream(s, ownerId, name, Readable.from([await bytesOf(s, ownerId, source)]));
  return placeFile(s, ownerId, parent, name, attachment.id);
}

/** COPY: the resource (and with depth infinity everything in a folder) as new notes, files and folders, dead properties included. */
async function copy(
  s: DavServices,
  ownerId: string,
  source: Entry,
  sourcePath: Segments,
  parent: Collection,
  name: string,
  existing: Entry | undefined,
  deep: boolean,
): Promise<void> {
  // A folder's whole tree is checked against the folder limits first, so that a copy too deep or too
  // large is refused before any of it is made (each folder is checked again as it is created).
  if (deep && source.kind === 'folder') await requireRoomForCopy(s.db, ownerId, source.id, folderIdOf(parent));
  await copyTree(s, ownerId, source, sourcePath, parent, name, existing, deep);
}

async function copyTree(
  s: DavServices,
  ownerId: string,
  source: Entry,
  sourcePath: Segments,
  parent: Collection,
  name: string,
  existing: Entry | undefined,
  deep: boolean,
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
