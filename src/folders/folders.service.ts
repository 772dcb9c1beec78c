import { setImmediate as nextTurn } from 'node:timers/promises';
import { inTransaction, noteChanged } from '../db/effects.js';
import type { Db, Trx } from '../db/schema.js';
import { FOLDER_MAX_DEPTH, FOLDERS_MAX } from './folder-limits.js';
import { isForeignKeyViolation, isUniqueViolation, nowIso } from '../db/values.js';
import { Errors } from '../errors.js';
import { newId } from '../shared/ids.js';
import { removeNoteTags } from '../tags/tags.repository.js';
import { cleanFolderName, folderNameKey } from './folder-name.js';
import { FolderTree } from './folder-tree.js';
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

/**
 * Refuses room for `adding` more folders, the deepest `height` levels below `parentId`, past the
 * limits (folder-limits.ts). Inside a transaction that holds lockTree, so that two creates at
 * 9,999 cannot both count 9,999.
 */
export async function requireRoom(
  trx: Trx,
  ownerId: string,
  parentId: string | null,
  height: number,
  adding: number,
): Promise<void> {
  if (parentId !== null && (await repo.depthOf(trx, parentId)) + height > FOLDER_MAX_DEPTH)
    throw Errors.folderTooDeep();
  if ((await repo.countFolders(trx, ownerId)) + adding > FOLDERS_MAX) throw Errors.folderLimit();
}

/**
 * Whether a copy of `folderId` and everything below it fits under `parentId`, checked before a
 * WebDAV COPY starts (it creates the folders one by one, each checked again as it is created).
 */
export async function requireRoomForCopy(
  db: Db,
  ownerId: string,
  folderId: string,
  parentId: string | null,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await repo.lockTree(trx, ownerId);
    const { height, count } = await repo.subtreeShape(trx, folderId);
    await requireRoom(trx, ownerId, parentId, height, count);
  });
}

/** Whether moving `folderId` under `parentId` keeps within the depth limit (WebDAV asks before it replaces what is at the destination). */
export async function requireRoomForMove(
  db: Db,
  ownerId: string,
  folderId: string,
  parentId: string | null,
): Promise<void> {
  if (parentId === null) return;
  await db.transaction().execute(async (trx) => {
    const folder = await requireFolder(trx, ownerId, folderId);
    if (folder.parent_id !== parentId) await requireDepthAfterMove(trx, folder, parentId);
  });
}

export async function createFolder(
  db: Db,
  ownerId: string,
  input: { name: string; parent_id?: string | null },
  checkpoint?: (step: string) => Promise<void>,
): Promise<Folder> {
  const parentId = input.parent_id ?? null;
  const now = nowIso();
  const folder: Folder = {
    id: newId(),
    name: cleanFolderName(input.name),
    parent_id: parentId,
    created_at: now,
    updated_at: now,
  };
  try {
    await db.transaction().execute(async (trx) => {
      await repo.lockTree(trx, ownerId);
      if (parentId !== null) await requireFolder(trx, ownerId, parentId);
      await requireRoom(trx, ownerId, parentId, 1, 1);
      await checkpoint?.('folders:create-checked');
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
  db: Db,
  ownerId: string,
  folderId: string,
  change: { name?: string; parent_id?: string | null },
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
      if (parentId !== folder.parent_id && parentId !== null) await requireDepthAfterMove(trx, folder, parentId);
      await checkpoint?.('folders:move-checked');
      const name = change.name === undefined ? folder.name : cleanFolderName(change.name);
      const updated: Folder = { ...folder, name, parent_id: parentId, updated_at: nowIso() };
      await repo.updateFolder(trx, ownerId, folderId, {
        name,
        name_key: folderNameKey(name),
        parent_id: parentId,
        updated_at: updated.updated_at,
      });
      return updated;
    });
  } catch (error) {
    return nameTaken(error);
  }
}

/**
 * A move may not take the subtree's deepest folder past FOLDER_MAX_DEPTH. A tree already deeper
 * (made before the limit) may still be moved anywhere that does not make it deeper still.
 */
async function requireDepthAfterMove(trx: Trx, folder: Folder, parentId: string): Promise<void> {
  const { height } = await repo.subtreeShape(trx, folder.id);
  const deepest = (await repo.depthOf(trx, parentId)) + height;
  if (deepest <= FOLDER_MAX_DEPTH) return;
  const before = (folder.parent_id === null ? 0 : await repo.depthOf(trx, folder.parent_id)) + height;
  if (deepest > before) throw Errors.folderTooDeep();
}

/**
 * What deleting folders does to the notes in them (notes/notes.repository.ts trashNotesInFolders,
 * given by the caller: the notes are not this module's): into the trash at `now`, or deleted when
 * `now` is null. Returns the ids of the notes it took.
 */
export type TakeNotesInFolders = (
  trx: Trx,
  ownerId: string,
  folderIds: readonly string[],
  now: string | null,
) => Promise<string[]>;

/**
 * Deletes the folder and every folder below it; the notes inside go to the trash (or, with
 * TRASH_DAYS=0, are deleted). A trashed note whose folder is gone comes back to the top level.
 * Returns the notes it trashed (or deleted).
 */
export async function deleteFolder(
  db: Db,
  ownerId: string,
  folderId: string,
  trashDays: number,
  takeNotes: TakeNotesInFolders,
): Promise<string[]> {
  return inTransaction(db, async (trx) => {
    await repo.lockTree(trx, ownerId);
    await requireFolder(trx, ownerId, folderId);
    const folderIds = await repo.subtreeIds(trx, folderId);
    const noteIds = await takeNotes(trx, ownerId, folderIds, trashDays === 0 ? null : nowIso());
    if (trashDays !== 0) await removeNoteTags(trx, noteIds);
    await repo.deleteFolder(trx, ownerId, folderId);
    for (const noteId of noteIds) noteChanged(trx, { type: trashDays === 0 ? 'note.deleted' : 'note.trashed', noteId });
    return noteIds;
  });
}

const FOLDERS_PAGE = 1_000;

/**
 * Every folder of the owner as a tree: for export (folder-tree.ts). Read a page at a time with a
 * turn of the event loop between: 20,000 rows in one query held it 100-250 ms (measured).
 */
export async function folderTree(db: Db, ownerId: string): Promise<FolderTree> {
  const tree = new FolderTree();
  for (
    let page = await repo.foldersPage(db, ownerId, undefined, FOLDERS_PAGE);
    ;
    page = await repo.foldersPage(db, ownerId, page.at(-1)!.id, FOLDERS_PAGE)
  ) {
    tree.add(page);
    if (page.length < FOLDERS_PAGE) break;
    await nextTurn();
  }
  return tree;
}

/**
 * The folders an import's paths name, at most: each distinct path prefix (names compared as
 * siblings are). More than FOLDERS_MAX can never fit, whatever the account holds.
 */
export function folderPrefixCount(paths: readonly string[]): number {
  const prefixes = new Set<string>();
  for (const path of paths) {
    let key = '';
    for (const segment of path.split('/')) {
      key += `/${folderNameKey(segment)}`;
      prefixes.add(key);
    }
  }
  return prefixes.size;
}

/**
 * Creates an import's folders (`paths`, as resolveFolderPath) inside its transaction, refusing
 * with folder_limit (the transaction then undoes them) when the account would pass FOLDERS_MAX.
 * The tree is locked as a create locks it, so that imports and creates count one at a time.
 */
export async function importFolders(trx: Trx, ownerId: string, paths: readonly string[]): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  if (paths.length === 0) return ids;
  if (folderPrefixCount(paths) > FOLDERS_MAX) throw Errors.folderLimit();
  await repo.lockTree(trx, ownerId);
  let room = FOLDERS_MAX - (await repo.countFolders(trx, ownerId));
  const byKey = new Map<string, string>();
  for (const path of paths) {
    if (!ids.has(path))
      ids.set(
        path,
        await resolveFolderPath(trx, ownerId, path, byKey, () => {
          if (--room < 0) throw Errors.folderLimit();
        }),
      );
  }
  return ids;
}

/**
 * The folder at `path` (names split on `/`, each already checked with folderNameProblem), reusing
 * the caller's folders whose names match ignoring case and creating the rest: for import, inside
 * its transaction. Returns the last folder's id.
 */
export async function resolveFolderPath(
  db: Db,
  ownerId: string,
  path: string,
  cache = new Map<string, string>(),
  created: () => void = () => undefined,
): Promise<string> {
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
      await repo.insertFolder(db, {
        id,
        owner_id: ownerId,
        parent_id: parentId,
        name,
        name_key: folderNameKey(name),
        created_at: now,
        updated_at: now,
      });
      created();
    }
    cache.set(key, id);
    parentId = id;
  }
  return parentId!;
}
