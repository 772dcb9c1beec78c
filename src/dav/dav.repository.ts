import { sql } from 'kysely';
import { byteLength } from '../db/dialect.js';
import type { Db } from '../db/schema.js';

const inFolder = (folderId: string | null) =>
  folderId === null ? (['is', null] as const) : (['=', folderId] as const);

export function childFolders(db: Db, ownerId: string, folderId: string | null) {
  const [op, value] = inFolder(folderId);
  return db
    .selectFrom('folders')
    .select(['id', 'name', 'name_key', 'created_at', 'updated_at'])
    .where('owner_id', '=', ownerId)
    .where('parent_id', op, value)
    .orderBy('name_key')
    .execute();
}

/** The folder's notes outside the trash, oldest first (the order in which clashing names get " (2)"), with their size in bytes. */
export function childNotes(db: Db, ownerId: string, folderId: string | null) {
  const [op, value] = inFolder(folderId);
  return db
    .selectFrom('notes as n')
    .innerJoin('note_versions as v', 'v.id', 'n.version_id')
    .select([
      'n.id',
      'n.title',
      'n.version',
      'n.version_id',
      'n.created_at',
      'n.updated_at',
      byteLength(db, 'v.content').as('size'),
    ])
    .where('n.owner_id', '=', ownerId)
    .where('n.deleted_at', 'is', null)
    .where('n.folder_id', op, value)
    .orderBy('n.created_at')
    .orderBy('n.id')
    .execute();
}

export function childFiles(db: Db, ownerId: string, folderId: string | null) {
  const [op, value] = inFolder(folderId);
  return db
    .selectFrom('dav_files as f')
    .innerJoin('attachments as a', 'a.id', 'f.attachment_id')
    .select([
      'f.id',
      'f.name',
      'f.name_key',
      'f.created_at',
      'f.updated_at',
      'f.attachment_id',
      'a.size',
      'a.sha256',
      'a.content_type',
    ])
    .where('f.owner_id', '=', ownerId)
    .where('f.folder_id', op, value)
    .orderBy('f.created_at')
    .orderBy('f.id')
    .execute();
}

export async function insertFile(
  db: Db,
  row: {
    id: string;
    owner_id: string;
    folder_id: string | null;
    name: string;
    name_key: string;
    attachment_id: string;
    created_at: string;
    updated_at: string;
  },
): Promise<void> {
  await db.insertInto('dav_files').values(row).execute();
}

export async function updateFile(
  db: Db,
  ownerId: string,
  id: string,
  change: {
    folder_id?: string | null;
    name?: string;
    name_key?: string;
    attachment_id?: string;
    updated_at: string;
  },
): Promise<void> {
  await db.updateTable('dav_files').set(change).where('owner_id', '=', ownerId).where('id', '=', id).execute();
}

export async function deleteFile(db: Db, ownerId: string, id: string): Promise<void> {
  await db.deleteFrom('dav_files').where('owner_id', '=', ownerId).where('id', '=', id).execute();
}

/** Whether any placed file or version still uses the attachment. */
export async function attachmentInUse(db: Db, attachmentId: string): Promise<boolean> {
  const row = await db
    .selectFrom('attachments as a')
    .select('a.id')
    .where('a.id', '=', attachmentId)
    .where((eb) =>
      eb.or([
        eb.exists(eb.selectFrom('dav_files').select(sql.lit(1).as('one')).where('attachment_id', '=', attachmentId)),
        eb.exists(
          eb.selectFrom('attachment_refs').select(sql.lit(1).as('one')).where('attachment_id', '=', attachmentId),
        ),
      ]),
    )
    .executeTakeFirst();
  return row !== undefined;
}

// Dead properties.

export function properties(db: Db, resourceIds: readonly string[]) {
  if (resourceIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('dav_properties')
    .select(['resource_id', 'namespace', 'name', 'value'])
    .where('resource_id', 'in', resourceIds)
    .orderBy('namespace')
    .orderBy('name')
    .execute();
}

export async function setProperty(
  db: Db,
  row: { owner_id: string; resource_id: string; namespace: string; name: string; value: string },
): Promise<void> {
  await db
    .insertInto('dav_properties')
    .values(row)
    .onConflict((oc) => oc.columns(['resource_id', 'namespace', 'name']).doUpdateSet({ value: row.value }))
    .execute();
}

export async function removeProperty(db: Db, resourceId: string, namespace: string, name: string): Promise<void> {
  await db
    .deleteFrom('dav_properties')
    .where('resource_id', '=', resourceId)
    .where('namespace', '=', namespace)
    .where('name', '=', name)
    .execute();
}

export async function removeProperties(db: Db, resourceIds: readonly string[]): Promise<void> {
  if (resourceIds.length === 0) return;
  await db.deleteFrom('dav_properties').where('resource_id', 'in', resourceIds).execute();
}

/**
 * Deletes dead properties whose resource is gone by another way than WebDAV (a note purged from
 * the trash, a folder or a file deleted through the API), which removes its own as it deletes.
 * A trashed note keeps its properties: restored, it has them again.
 */
export async function pruneOrphanProperties(db: Db): Promise<number> {
  // NOT EXISTS, not NOT IN: PostgreSQL makes these anti-joins on the primary keys, where NOT IN
  // over more ids than work_mem holds rescans the list for every row.
  const result = await db
    .deleteFrom('dav_properties')
    .where((eb) =>
      eb.and([
        eb.not(
          eb.exists(eb.selectFrom('notes').select('notes.id').whereRef('notes.id', '=', 'dav_properties.resource_id')),
        ),
        eb.not(
          eb.exists(
            eb.selectFrom('folders').select('folders.id').whereRef('folders.id', '=', 'dav_properties.resource_id'),
          ),
        ),
        eb.not(
          eb.exists(
            eb
              .selectFrom('dav_files')
              .select('dav_files.id')
              .whereRef('dav_files.id', '=', 'dav_properties.resource_id'),
          ),
        ),
        // The top level's are the user's own (they go with the account).
        eb('resource_id', '<>', eb.ref('owner_id')),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function copyProperties(db: Db, ownerId: string, fromId: string, toId: string): Promise<void> {
  const rows = await properties(db, [fromId]);
  for (const row of rows)
    await setProperty(db, {
      owner_id: ownerId,
      resource_id: toId,
      namespace: row.namespace,
      name: row.name,
      value: row.value,
    });
}

// Locks.

export interface LockRow {
  token: string;
  path: string;
  depth_infinity: boolean;
  exclusive: boolean;
  lock_owner: string;
  timeout_seconds: number;
  expires_at: string;
}

const LOCK = ['token', 'path', 'depth_infinity', 'exclusive', 'lock_owner', 'timeout_seconds', 'expires_at'] as const;

/** The owner's live locks (a user holds few; expired ones are left out and removed). */
export async function liveLocks(db: Db, ownerId: string, now: string): Promise<LockRow[]> {
  await db.deleteFrom('dav_locks').where('owner_id', '=', ownerId).where('expires_at', '<=', now).execute();
  return db.selectFrom('dav_locks').select(LOCK).where('owner_id', '=', ownerId).execute();
}

export async function insertLock(db: Db, row: LockRow & { owner_id: string }): Promise<void> {
  await db.insertInto('dav_locks').values(row).execute();
}

export async function refreshLock(
  db: Db,
  ownerId: string,
  token: string,
  timeoutSeconds: number,
  expiresAt: string,
): Promise<void> {
  await db
    .updateTable('dav_locks')
    .set({ timeout_seconds: timeoutSeconds, expires_at: expiresAt })
    .where('owner_id', '=', ownerId)
    .where('token', '=', token)
    .execute();
}

export async function deleteLock(db: Db, ownerId: string, token: string): Promise<boolean> {
  const result = await db
    .deleteFrom('dav_locks')
    .where('owner_id', '=', ownerId)
    .where('token', '=', token)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function deleteLocksAt(db: Db, ownerId: string, tokens: readonly string[]): Promise<void> {
  if (tokens.length === 0) return;
  await db.deleteFrom('dav_locks').where('owner_id', '=', ownerId).where('token', 'in', tokens).execute();
}
