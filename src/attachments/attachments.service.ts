import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/schema.js';
import { isForeignKeyViolation, nowIso } from '../db/values.js';
import { Errors } from '../errors.js';
import { newId } from '../shared/ids.js';
import * as repo from './attachments.repository.js';
import { findStorageQuota, lockSessions } from '../accounts/user.repository.js';
import { detectContentType, SNIFF_BYTES } from './content-type.js';
import type { AttachmentStorage } from './storage.js';

export interface AttachmentServices {
  db: Db;
  storage: AttachmentStorage;
  log: FastifyBaseLogger;
  maxBytes: number;
  /** STORAGE_QUOTA_BYTES, for accounts without their own (PATCH /auth/admin/{id}); 0: unlimited. */
  quotaBytes: number;
}

/** The owner's quota: their own when an administrator set one, else STORAGE_QUOTA_BYTES; 0 is unlimited. */
async function quotaOf(s: AttachmentServices, ownerId: string): Promise<number> {
  return (await findStorageQuota(s.db, ownerId)) ?? s.quotaBytes;
}

export type Attachment = repo.AttachmentRow;

const MiB = 1024 * 1024;
const describe = (bytes: number) => (bytes >= MiB ? `${+(bytes / MiB).toFixed(1)} MiB` : `${bytes} bytes`);

export const tooLarge = (maxBytes: number) =>
  Errors.contentTooLarge(`The file is larger than the ${describe(maxBytes)} limit for one file`);
export const overQuota = (used: number, quota: number) => Errors.quotaExceeded(describe(used), describe(quota));

/** A file name as the client gave it, made safe to show and to send back in Content-Disposition. */
export function cleanFilename(name: string | undefined): string {
  const cleaned = (name ?? '')
    .normalize('NFC')
    .replace(/[\p{Cc}\p{Cf}\\/]/gu, '')
    .trim()
    .slice(0, 255);
  return cleaned === '' ? 'file' : cleaned;
}

/**
 * Streams an upload into storage: hashed and counted as it passes, cut with 413 the moment it goes
 * past the file limit or the space left, never held whole in memory. Identical bytes the owner
 * already has are stored once: the new copy is dropped and the new attachment shares the blob.
 */
export async function upload(
  s: AttachmentServices,
  ownerId: string,
  file: { filename: string | undefined; mimetype: string | undefined; stream: AsyncIterable<Buffer> },
): Promise<Attachment> {
  const quota = await quotaOf(s, ownerId);
  const usedBefore = quota === 0 ? 0 : await repo.usedBytes(s.db, ownerId);
  const limit = quota === 0 ? s.maxBytes : Math.min(s.maxBytes, Math.max(0, quota - usedBefore));
  const key = `${nowIso()}/${newId()}`;
  const hash = createHash('sha256');
  let size = 0;
  let head = Buffer.alloc(0);
  async function* counted(): AsyncGenerator<Buffer> {
    for await (const chunk of file.stream) {
      size += chunk.length;
      if (size > limit) throw size > s.maxBytes ? tooLarge(s.maxBytes) : overQuota(usedBefore, quota);
      if (head.length < SNIFF_BYTES) head = Buffer.concat([head, chunk.subarray(0, SNIFF_BYTES - head.length)]);
      hash.update(chunk);
      yield chunk;
    }
  }
  try {
    await repo.insertPendingBlob(s.db, ownerId, key, nowIso());
  } catch (error) {
    if (isForeignKeyViolation(error)) throw Errors.userNotFound();
    throw error;
  }
  let stored = false;
  try {
    await s.storage.put(key, counted());
    stored = true;
    const sha256 = hash.digest('hex');
    const attachment: Attachment = {
      id: newId(),
      filename: cleanFilename(file.filename),
      content_type: detectContentType(head, file.mimetype),
      size,
      sha256,
      created_at: nowIso(),
    };
    const kept = await s.db.transaction().execute(async (trx) => {
      // The owner's uploads queue here while one decides about quota (the user row's lock, as sessions take it).
      await lockSessions(trx, ownerId);
      const existing = await repo.findBlob(trx, ownerId, sha256);
      if (existing === undefined) {
        const used = quota === 0 ? 0 : await repo.usedBytes(trx, ownerId);
        if (quota !== 0 && used + size > quota) throw overQuota(used, quota);
        await repo.completeBlob(trx, key, sha256, size);
      } else {
        await repo.deleteBlobByKey(trx, key);
      }
      await repo.insertAttachment(trx, { ...attachment, owner_id: ownerId });
      return existing === undefined;
    });
    if (!kept)
      await s.storage
        .delete(key)
        .catch((error: unknown) => s.log.warn({ err: error, key }, 'dropping a duplicate upload failed'));
    return attachment;
  } catch (error) {
    await discard(s, key, stored || s.storage.kind === 's3');
    if (isForeignKeyViolation(error)) throw Errors.userNotFound();
    throw error;
  }
}

/** Removes what a failed upload left: its blob row (and chunks), and the stored object. */
async function discard(s: AttachmentServices, key: string, object: boolean): Promise<void> {
  try {
    await repo.deleteBlobByKey(s.db, key);
    if (object && s.storage.kind !== 'database') await s.storage.delete(key);
  } catch (error) {
    s.log.warn({ err: error, key }, 'cleaning up after a failed upload failed; the periodic job will');
  }
}

export async function find(s: AttachmentServices, ownerId: string, id: string) {
  const row = await repo.findAttachment(s.db, ownerId, id);
  if (row === undefined) throw Errors.attachmentNotFound();
  return row;
}

/** The caller's own file, or one a version of a note shared with them links to (members read what they see). */
export async function findReadable(s: AttachmentServices, userId: string, id: string) {
  const row = (await repo.findAttachment(s.db, userId, id)) ?? (await repo.findSharedAttachment(s.db, userId, id));
  if (row === undefined) throw Errors.attachmentNotFound();
  return row;
}

export function open(
  s: AttachmentServices,
  storageKey: string,
  size: number,
  range?: { start: number; end: number },
): Readable {
  return s.storage.get(storageKey, size, range);
}

export async function list(s: AttachmentServices, ownerId: string, limit: number, offset: number) {
  const rows = await repo.listAttachments(s.db, ownerId, limit, offset);
  return rows.map((row) => ({ ...row, references: Number(row.references ?? 0) }));
}

export async function usage(s: AttachmentServices, ownerId: string) {
  const [used, quota] = await Promise.all([repo.usedBytes(s.db, ownerId), quotaOf(s, ownerId)]);
  return { used_bytes: used, quota_bytes: quota };
}

export async function remove(s: AttachmentServices, ownerId: string, id: string): Promise<void> {
  let outcome;
  try {
    outcome = await repo.deleteAttachment(s.db, ownerId, id);
  } catch (error) {
    // A save linked to it between the check and the delete: the reference's foreign key says no.
    if (isForeignKeyViolation(error)) throw Errors.attachmentReferenced();
    throw error;
  }
  if (outcome === 'missing') throw Errors.attachmentNotFound();
  if (outcome === 'referenced') throw Errors.attachmentReferenced();
  await collectBlobs(s.db, s.storage, new Date());
}

/** An attachment no version linked to within this long after its upload is deleted by the periodic job. */
export const UNREFERENCED_GRACE_MS = 24 * 60 * 60 * 1000;
/** An upload still pending after this long was cut off (a crash, a dropped connection). */
const PENDING_GRACE_MS = 60 * 60 * 1000;

/**
 * Deletes blobs no attachment uses and abandoned uploads: rows first (chunks go with them), then
 * the stored objects elsewhere. A failed object delete is counted, not thrown: the row is gone,
 * so only the store's space is lost (docs/features.md, "Attachments").
 */
async function collectBlobs(
  db: Db,
  storage: AttachmentStorage,
  now: Date,
): Promise<{ blobs: number; failures: number }> {
  const before = new Date(now.getTime() - PENDING_GRACE_MS).toISOString();
  let blobs = 0;
  let failures = 0;
  for (;;) {
    const keys = await repo.orphanBlobs(db, before, 100);
    let progress = 0;
    for (const key of keys) {
      if (!(await repo.deleteOrphanBlob(db, key, before))) continue;
      progress++;
      if (storage.kind !== 'database')
        await storage.delete(key).catch(() => {
          failures++;
        });
    }
    blobs += progress;
    if (keys.length < 100 || progress === 0) return { blobs, failures };
  }
}

/** The periodic job: unreferenced attachments past their grace, then what no attachment uses. */
export async function collectGarbage(
  db: Db,
  storage: AttachmentStorage,
  now: Date,
): Promise<{ attachments: number; blobs: number; failures: number }> {
  const attachments = await repo.deleteUnreferenced(db, new Date(now.getTime() - UNREFERENCED_GRACE_MS).toISOString());
  return { attachments, ...(await collectBlobs(db, storage, now)) };
}

/**
 * Deletes an attachment nothing uses any more (no version links to it, WebDAV places it nowhere)
 * and its bytes if no other attachment shares them: what a replaced or deleted WebDAV file leaves.
 */
export async function discardIfUnused(s: AttachmentServices, ownerId: string, id: string): Promise<void> {
  if (await repo.deleteIfUnused(s.db, ownerId, id)) await collectBlobs(s.db, s.storage, new Date());
}

/** A second attachment with the same bytes (a WebDAV COPY): the blob is shared, nothing is stored again. */
export async function duplicate(
  s: AttachmentServices,
  ownerId: string,
  id: string,
  filename: string,
): Promise<Attachment> {
  const source = await find(s, ownerId, id);
  const copy: Attachment = {
    id: newId(),
    filename: cleanFilename(filename),
    content_type: source.content_type,
    size: Number(source.size),
    sha256: source.sha256,
    created_at: nowIso(),
  };
  await repo.insertAttachment(s.db, { ...copy, owner_id: ownerId });
  return copy;
}
