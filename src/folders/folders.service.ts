import type { Db } from '../db/schema.js';
import { isForeignKeyViolation, isUniqueViolation, nowIso } from '../db/values.js';
import { Errors } from '../errors.js';
import { newId } from '../shared/ids.js';
import { trashNotesInFolders } from '../notes/notes.repository.js';
import { removeNoteTags } from '../tags/tags.repository.js';
import { cleanFolderName, folderNameKey } from './folder-name.js';
import * as repo from './folders.repository.js';
import type { FolderRecord } from './folders.repository.js';

export type Folder = FolderRecord;
export type FolderWithCount = Folder & { note_count: number };

/** The caller's folder, or 404 (another user's folder is missing, like another user's note). */
export async function requireFolder(db: Db, ownerId: string, folderId: string): Promise<Folder> {
  const folder = await repo.findFolder(db, ownerId, folderId);
  if (folder === undefined) throw Errors.folderNotFound();
  return folder;
}

/** Every folder of the caller, flat (parents before nothing in particular: a client builds the tree). */
export async function listFolders(db: Db, ownerId: string): Promise<FolderWithCount[]> {
  const [folders, counts] = await Promise.all([repo.listFolders(db, ownerId), repo.noteCounts(db, ownerId)]);
  return folders.map((folder) => ({ ...folder, note_count: counts.get(folder.id) ?? 0 }));
}

function nameTaken(error: unknown): never {
  if (isUniqueViolation(error)) throw Errors.folderNameTaken();
  throw error;
}

export async function createFolder(db: Db, ownerId: string, input: { name: string; parent_id?: string | null }): Promise<Folder> {
  const parentId = input.parent_id ?? null;
  const now = nowIso();
  const folder: Folder = { id: newId(), name: cleanFolderName(input.name), parent_id: parentId, created_at: now, updated_at: now };
  try {
    await db.transaction().execute(async (trx) => {
      if (parentId !== null) await requireFolder(trx, ownerId, parentId);
      await repo.insertFolder(trx, { ...folder, owner_id: ownerId, name_key: folderNameKey(folder.name) });
    });
  } catch (error) {
    // The parent (or the account) went away between the look-up and the insert.
    if (isForeignKeyViolation(error)) throw parentId === null ? Errors.userNotFound() : Errors.folderNotFound();
    nameTaken(error);
  }
  return folder;
}

/**
 * Renames and/or moves a folder. The owner's tree is locked first, so the cycle check sees every
 * move that answered before it and none can slip in between (see lockTree).
 */
export async function updateFolder(
  db: Db, ownerId: string, folderId: string, change: { name?: string; parent_id?: string | null },
  checkpoint?: (step: string) => Promise<void>,
): Promise<Folder> {
  try {
    return await db.transaction().execute(async (trx) => {
      await repo.lockTree(trx, ownerId);
      const folder = await requireFolder(trx, ownerId, folderId);
      const parentId = change.parent_id === undefined ? folder.parent_id : change.parent_id;
      if (change.parent_id != null) {
        await requireFolder(trx, ownerId, change.parent_id);
        if (await repo.isAncestorOrSelf(trx, folderId, change.parent_id)) throw Errors.folderCycle();
      }
      await checkpoint?.('folders:move-checked');
      const name = change.name === undefined ? folder.name : cleanFolderName(change.name);
      const updated: Folder = { ...folder, name, parent_id: parentId, updated_at: nowIso() };
      await repo.updateFolder(trx, ownerId, folderId, {
        name, name_key: folderNameKey(name), parent_id: parentId, updated_at: updated.updated_at,
      });
      return updated;
    });
  } catch (error) {
    return nameTaken(error);
  }
}

/**
 * Deletes the folder and every folder below it; the notes inside go to the trash (or, with
 * TRASH_DAYS=0, are deleted). A trashed note whose folder is gone comes back to the top level.
 * Returns the notes it trashed (or deleted).
 */
export async function deleteFolder(db: Db, ownerId: string, folderId: string, trashDays: number): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    await repo.lockTree(trx, ownerId);
    await requireFolder(trx, ownerId, folderId);
    const folderIds = await repo.subtreeIds(trx, folderId);
    const noteIds = await trashNotesInFolders(trx, ownerId, folderIds, trashDays === 0 ? null : nowIso());
    if (trashDays !== 0) await removeNoteTags(trx, noteIds);
    await repo.deleteFolder(trx, ownerId, folderId);
    return noteIds;
  });
}

/** Every folder's path (`Work/Plans`), by id: for export. */
export async function folderPaths(db: Db, ownerId: string): Promise<Map<string, string>> {
  const folders = await repo.listFolders(db, ownerId);
  const byId = new Map(folders.map((folder) => [folder.id, folder]));
  const paths = new Map<string, string>();
  const pathOf = (id: string): string => {
    const known = paths.get(id);
    if (known !== undefined) return known;
    const folder = byId.get(id)!;
    const path = folder.parent_id === null ? folder.name : `${pathOf(folder.parent_id)}/${folder.name}`;
    paths.set(id, path);
    return path;
  };
  for (const folder of folders) pathOf(folder.id);
  return paths;
}

/**
 * The folder at `path` (names split on `/`, each already checked with folderNameProblem), reusing
 * the caller's folders whose names match ignoring case and creating the rest: for import, inside
 * its transaction. Returns the last folder's id.
 */
export async function resolveFolderPath(db: Db, ownerId: string, path: string, cache = new Map<string, string>()): Promise<string> {
  let parentId: string | null = null;
  let key = '';
  for (const segment of path.split('/')) {
    key += `/${folderNameKey(segment)}`;
    const cached = cache.get(key);
    if (cached !== undefined) {
      parentId = cached;
      continue;
    }
    const existing = await repo.findChildByKey(db, ownerId, parentId, folderNameKey(segment));
    let id: string;
    if (existing !== undefined) {
      id = existing.id;
    } else {
      const now = nowIso();
      const name = cleanFolderName(segment);
      id = newId();
      await repo.insertFolder(db, { id, owner_id: ownerId, parent_id: parentId, name, name_key: folderNameKey(name), created_at: now, updated_at: now });
    }
    cache.set(key, id);
    parentId = id;
  }
  return parentId!;
}
