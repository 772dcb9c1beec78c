import { sql } from 'kysely';
import { transactionLock } from '../db/dialect.js';
import type { Db, Trx } from '../db/schema.js';

export interface FolderRecord {
  id: string;
  name: string;
  parent_id: string | null;
  created_at: string;
  updated_at: string;
}

const FOLDER = ['id', 'name', 'parent_id', 'created_at', 'updated_at'] as const;

export function listFolders(db: Db, ownerId: string): Promise<FolderRecord[]> {
  return db
    .selectFrom('folders')
    .select(FOLDER)
    .where('owner_id', '=', ownerId)
    .orderBy('name_key')
    .orderBy('id')
    .execute();
}

/** A page of the owner's folders by id, after `afterId`: for export, which reads them all without holding the event loop. */
export function foldersPage(
  db: Db,
  ownerId: string,
  afterId: string | undefined,
  limit: number,
): Promise<FolderRecord[]> {
  let query = db.selectFrom('folders').select(FOLDER).where('owner_id', '=', ownerId);
  if (afterId !== undefined) query = query.where('id', '>', afterId);
  return query.orderBy('id').limit(limit).execute();
}

/** Notes directly in each folder, trash excluded (archived included): one index-only range scan. */
export async function noteCounts(db: Db, ownerId: string): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('notes')
    .select(['folder_id', sql<number>`count(*)`.as('count')])
    .where('owner_id', '=', ownerId)
    .where('deleted_at', 'is', null)
    .where('folder_id', 'is not', null)
    .groupBy('folder_id')
    .execute();
  return new Map(rows.map((row) => [row.folder_id!, Number(row.count)]));
}

export function findFolder(db: Db, ownerId: string, id: string): Promise<FolderRecord | undefined> {
  return db
    .selectFrom('folders')
    .select(FOLDER)
    .where('id', '=', id)
    .where('owner_id', '=', ownerId)
    .executeTakeFirst();
}

export async function insertFolder(
  db: Db,
  folder: FolderRecord & { owner_id: string; name_key: string },
): Promise<void> {
  await db.insertInto('folders').values(folder).execute();
}

export async function updateFolder(
  db: Db,
  ownerId: string,
  id: string,
  change: { name?: string; name_key?: string; parent_id?: string | null; updated_at: string },
): Promise<void> {
  await db.updateTable('folders').set(change).where('id', '=', id).where('owner_id', '=', ownerId).execute();
}

/**
 * Holds the owner's folder tree still until the transaction ends, so that two moves cannot each
 * pass the cycle check against the tree before the other (A into B while B goes into A), and two
 * creates (or an import) cannot both count room for one more. PostgreSQL: an advisory lock named for
 * the owner, not their users row, which every login and note insert of theirs needs (FOR KEY SHARE,
 * by the foreign key): an import holding it froze those for its whole transaction. SQLite takes its
 * database write lock at once.
 */
export async function lockTree(trx: Trx, ownerId: string): Promise<void> {
  await transactionLock(trx, `folders:${ownerId}`, () =>
    trx
      .updateTable('folders')
      .set((eb) => ({ name: eb.ref('name') }))
      .where('id', '=', ownerId)
      .execute(),
  );
}

/** Whether `folderId` is `startId` or one of its ancestors. */
export async function isAncestorOrSelf(db: Db, folderId: string, startId: string): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`
    with recursive up (id, parent_id, depth) as (
      select id, parent_id, 0 from folders where id = ${startId}
      union all
      select f.id, f.parent_id, up.depth + 1 from folders f join up on f.id = up.parent_id where up.depth < 100000)
    select id from up where id = ${folderId} limit 1`.execute(db);
  return rows.length > 0;
}

/** The folder and every folder below it. */
export async function subtreeIds(db: Db, folderId: string): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    with recursive down (id) as (
      select id from folders where id = ${folderId}
      union all
      select f.id from folders f join down on f.parent_id = down.id)
    select id from down`.execute(db);
  return rows.map((row) => row.id);
}

/** Subfolders go with it (ON DELETE CASCADE); notes that pointed at them get a null folder (SET NULL). */
export async function deleteFolder(db: Db, ownerId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('folders').where('id', '=', id).where('owner_id', '=', ownerId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** A child of `parentId` (null: the top level) with this name key, for import's path look-ups. */
export function findChildByKey(
  db: Db,
  ownerId: string,
  parentId: string | null,
  nameKey: string,
): Promise<FolderRecord | undefined> {
  let query = db.selectFrom('folders').select(FOLDER).where('owner_id', '=', ownerId).where('name_key', '=', nameKey);
  query = parentId === null ? query.where('parent_id', 'is', null) : query.where('parent_id', '=', parentId);
  return query.executeTakeFirst();
}

/** How many folders the owner has. */
export async function countFolders(db: Db, ownerId: string): Promise<number> {
  const row = await db
    .selectFrom('folders')
    .select(sql<number>`count(*)`.as('count'))
    .where('owner_id', '=', ownerId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * The level a folder is at (a top-level folder is 1): one step per ancestor. The cap only guards
 * against a cycle, which the move check prevents; trees deeper than today's limit may exist.
 */
export async function depthOf(db: Db, folderId: string): Promise<number> {
  const { rows } = await sql<{ depth: number | null }>`
    with recursive up (id, parent_id, depth) as (
      select id, parent_id, 1 from folders where id = ${folderId}
      union all
      select f.id, f.parent_id, up.depth + 1 from folders f join up on f.id = up.parent_id where up.depth < 100000)
    select max(depth) as depth from up`.execute(db);
  return Number(rows[0]?.depth ?? 0);
}

/** The levels of a folder's subtree (a folder with no subfolder: 1) and how many folders it holds, itself included. */
export async function subtreeShape(db: Db, folderId: string): Promise<{ height: number; count: number }> {
  const { rows } = await sql<{ height: number | null; count: number }>`
    with recursive down (id, depth) as (
      select id, 1 from folders where id = ${folderId}
      union all
      select f.id, down.depth + 1 from folders f join down on f.parent_id = down.id where down.depth < 100000)
    select max(depth) as height, count(*) as count from down`.execute(db);
  return { height: Number(rows[0]?.height ?? 0), count: Number(rows[0]?.count ?? 0) };
}
