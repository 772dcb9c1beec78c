import { type ExpressionBuilder, sql } from 'kysely';
import type { Db, Tables } from '../db/schema.js';
import { uuidValue } from '../db/dialect.js';
import { isMember } from '../members/access.repository.js';

/** Storage of attachments, their blobs and references. Columns named, never `*` (db/compiled.ts). */

export const PENDING = 'pending:';

export interface AttachmentRow {
  id: string;
  filename: string;
  content_type: string;
  size: number;
  sha256: string;
  created_at: string;
}

const ATTACHMENT_COLUMNS = ['a.id', 'a.filename', 'a.content_type', 'a.size', 'a.sha256', 'a.created_at'] as const;

/** Bytes the owner's stored blobs take (uploads in progress not counted). */
export async function usedBytes(db: Db, ownerId: string): Promise<number> {
  const row = await db
    .selectFrom('attachment_blobs')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('size'), eb.lit(0)).as('used'))
    .where('owner_id', '=', ownerId)
    .where('sha256', 'not like', `${PENDING}%`)
    .executeTakeFirstOrThrow();
  return Number(row.used);
}

/** For administrators' lists: the attachment bytes each of these users stores (0 for none). */
export async function usedBytesOf(db: Db, ownerIds: string[]): Promise<Map<string, number>> {
  const used = new Map(ownerIds.map((id) => [id, 0]));
  if (ownerIds.length === 0) return used;
  const rows = await db
    .selectFrom('attachment_blobs')
    .select((eb) => ['owner_id', eb.fn.sum<number>('size').as('used')])
    .where('owner_id', 'in', ownerIds)
    .where('sha256', 'not like', `${PENDING}%`)
    .groupBy('owner_id')
    .execute();
  for (const row of rows) used.set(row.owner_id, Number(row.used));
  return used;
}

/** The blob row an upload writes its chunks under, before any chunk (they reference it). */
export async function insertPendingBlob(db: Db, ownerId: string, storageKey: string, now: string): Promise<void> {
  await db
    .insertInto('attachment_blobs')
    .values({ owner_id: ownerId, sha256: `${PENDING}${storageKey}`, size: 0, storage_key: storageKey, created_at: now })
    .execute();
}

export async function deleteBlobByKey(db: Db, storageKey: string): Promise<void> {
  await db.deleteFrom('attachment_blobs').where('storage_key', '=', storageKey).execute();
}

export function findBlob(db: Db, ownerId: string, sha256: string) {
  return db
    .selectFrom('attachment_blobs')
    .select(['storage_key', 'size'])
    .where('owner_id', '=', ownerId)
    .where('sha256', '=', sha256)
    .executeTakeFirst();
}

/** Makes a pending blob the stored one for its hash. */
export async function completeBlob(db: Db, storageKey: string, sha256: string, size: number): Promise<void> {
  await db.updateTable('attachment_blobs').set({ sha256, size }).where('storage_key', '=', storageKey).execute();
}

export async function insertAttachment(db: Db, row: AttachmentRow & { owner_id: string }): Promise<void> {
  await db.insertInto('attachments').values(row).execute();
}

/** The attachment with the key its bytes are under; undefined when it is not the owner's. */
export function findAttachment(db: Db, ownerId: string, id: string) {
  return db
    .selectFrom('attachments as a')
    .innerJoin('attachment_blobs as b', (join) =>
      join.onRef('b.owner_id', '=', 'a.owner_id').onRef('b.sha256', '=', 'a.sha256'),
    )
    .select([...ATTACHMENT_COLUMNS, 'b.storage_key'])
    .where('a.owner_id', '=', ownerId)
    .where('a.id', '=', id)
    .executeTakeFirst();
}

/** Another user's attachment that a version of a note shared with `userId` links to (that note outside the trash). */
export function findSharedAttachment(db: Db, userId: string, id: string) {
  return db
    .selectFrom('attachments as a')
    .innerJoin('attachment_blobs as b', (join) =>
      join.onRef('b.owner_id', '=', 'a.owner_id').onRef('b.sha256', '=', 'a.sha256'),
    )
    .select([...ATTACHMENT_COLUMNS, 'b.storage_key'])
    .where('a.id', '=', id)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('attachment_refs as r')
          .innerJoin('note_versions as v', 'v.id', 'r.version_id')
          .innerJoin('notes as n', 'n.id', 'v.note_id')
          .select(sql.lit(1).as('one'))
          .whereRef('r.attachment_id', '=', 'a.id')
          .whereRef('n.owner_id', '=', 'a.owner_id')
          .where(isMember(userId, 'n.id'))
          .where('n.deleted_at', 'is', null),
      ),
    )
    .executeTakeFirst();
}

/** Newest first, each with how many versions link to it. */
export function listAttachments(db: Db, ownerId: string, limit: number, offset: number) {
  return db
    .selectFrom('attachments as a')
    .select([
      ...ATTACHMENT_COLUMNS,
      (eb) =>
        eb
          .selectFrom('attachment_refs as r')
          .select((e) => e.fn.countAll<number>().as('n'))
          .whereRef('r.attachment_id', '=', 'a.id')
          .as('references'),
    ])
    .where('a.owner_id', '=', ownerId)
    .orderBy('a.created_at', 'desc')
    .orderBy('a.id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}

/** Deletes the attachment unless a version links to it: 'deleted', 'referenced' or 'missing'. */
export async function deleteAttachment(
  db: Db,
  ownerId: string,
  id: string,
): Promise<'deleted' | 'referenced' | 'missing'> {
  const result = await db
    .deleteFrom('attachments')
    .where('owner_id', '=', ownerId)
    .where('id', '=', id)
    .where((eb) =>
      eb.not(eb.exists(eb.selectFrom('attachment_refs').select(sql.lit(1).as('one')).where('attachment_id', '=', id))),
    )
    .executeTakeFirst();
  if (Number(result.numDeletedRows) === 1) return 'deleted';
  const exists = await db
    .selectFrom('attachments')
    .select('id')
    .where('owner_id', '=', ownerId)
    .where('id', '=', id)
    .executeTakeFirst();
  return exists === undefined ? 'missing' : 'referenced';
}

/** Deletes the attachment if no version links to it and WebDAV places it nowhere; whether it did. */
export async function deleteIfUnused(db: Db, ownerId: string, id: string): Promise<boolean> {
  const deleted = await db
    .deleteFrom('attachments')
    .where('owner_id', '=', ownerId)
    .where('id', '=', id)
    .where((eb) =>
      eb.not(eb.exists(eb.selectFrom('attachment_refs').select(sql.lit(1).as('one')).where('attachment_id', '=', id))),
    )
    .where((eb) =>
      eb.not(eb.exists(eb.selectFrom('dav_files').select(sql.lit(1).as('one')).where('attachment_id', '=', id))),
    )
    .executeTakeFirst();
  return Number(deleted.numDeletedRows) > 0;
}

/** Attachments no version links to and WebDAV does not place, older than `before`: the periodic job deletes them. */
export async function deleteUnreferenced(db: Db, before: string): Promise<number> {
  const result = await db
    .deleteFrom('attachments')
    .where('created_at', '<', before)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('attachment_refs as r')
            .select(sql.lit(1).as('one'))
            .whereRef('r.attachment_id', '=', 'attachments.id'),
        ),
      ),
    )
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('dav_files as f')
            .select(sql.lit(1).as('one'))
            .whereRef('f.attachment_id', '=', 'attachments.id'),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * The blob `b` is an orphan: no attachment shares its hash, or it is an upload that never finished
 * (pending since before `before`). Listing and deleting ask the same, the delete again in itself.
 */
function isOrphanBlob(eb: ExpressionBuilder<Tables & { b: Tables['attachment_blobs'] }, 'b'>, before: string) {
  return eb.or([
    eb.and([
      eb('b.sha256', 'not like', `${PENDING}%`),
      eb.not(
        eb.exists(
          eb
            .selectFrom('attachments as a')
            .select(sql.lit(1).as('one'))
            .whereRef('a.owner_id', '=', 'b.owner_id')
            .whereRef('a.sha256', '=', 'b.sha256'),
        ),
      ),
    ]),
    eb.and([eb('b.sha256', 'like', `${PENDING}%`), eb('b.created_at', '<', before)]),
  ]);
}

/**
 * Blobs nothing uses any more (no attachment shares their hash), and uploads that never finished
 * (pending before `before`): their keys, for the storage to delete, after the rows are gone.
 */
export async function orphanBlobs(db: Db, before: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('attachment_blobs as b')
    .select('b.storage_key')
    .where((eb) => isOrphanBlob(eb, before))
    .limit(limit)
    .execute();
  return rows.map((row) => row.storage_key);
}

/** Deletes the blob if it is still an orphan (the condition again, in the delete itself); whether it did. */
export async function deleteOrphanBlob(db: Db, storageKey: string, before: string): Promise<boolean> {
  const result = await db
    .deleteFrom('attachment_blobs as b')
    .where('b.storage_key', '=', storageKey)
    .where((eb) => isOrphanBlob(eb, before))
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** Every attachment of the owner with its storage key, oldest first: for exports (a user has at most quota/size of them). */
export function allAttachments(db: Db, ownerId: string) {
  return db
    .selectFrom('attachments as a')
    .innerJoin('attachment_blobs as b', (join) =>
      join.onRef('b.owner_id', '=', 'a.owner_id').onRef('b.sha256', '=', 'a.sha256'),
    )
    .select([...ATTACHMENT_COLUMNS, 'b.storage_key'])
    .where('a.owner_id', '=', ownerId)
    .orderBy('a.created_at')
    .orderBy('a.id')
    .execute();
}

/** Names an imported file; its type too, unless the bytes gave it one of `recognised`. */
export async function renameAttachment(
  db: Db,
  ownerId: string,
  id: string,
  filename: string,
  contentType: string,
  recognised: ReadonlySet<string>,
): Promise<void> {
  await db
    .updateTable('attachments')
    .set((eb) => ({
      filename,
      content_type: eb
        .case()
        .when('content_type', 'in', [...recognised])
        .then(eb.ref('content_type'))
        .else(contentType)
        .end(),
    }))
    .where('owner_id', '=', ownerId)
    .where('id', '=', id)
    .execute();
}

/**
 * Records that the version links to those of `ids` the owner has; links to unknown ids or other
 * users' files record nothing. Runs in the caller's transaction, beside the version's insert.
 */
export async function recordReferences(
  db: Db,
  ownerId: string,
  versionId: string,
  ids: readonly string[],
): Promise<void> {
  if (ids.length === 0) return;
  await db
    .insertInto('attachment_refs')
    .columns(['version_id', 'attachment_id'])
    .expression((eb) =>
      eb
        .selectFrom('attachments')
        .select([uuidValue(db, versionId).as('version_id'), 'id'])
        .where('owner_id', '=', ownerId)
        .where('id', 'in', ids),
    )
    .execute();
}

/** Those of `ids` that a version of the note already links to. */
export async function linkedByNote(db: Db, noteId: string, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('attachment_refs as r')
    .innerJoin('note_versions as v', 'v.id', 'r.version_id')
    .select('r.attachment_id')
    .distinct()
    .where('v.note_id', '=', noteId)
    .where('r.attachment_id', 'in', [...ids])
    .execute();
  return rows.map((row) => row.attachment_id);
}
