import type { Db } from '../db/schema.js';
import { bytesOf } from '../db/dialect.js';

/** The bytes of ATTACHMENT_STORAGE=database: rows of attachment_chunks, each under its blob's key. */

export async function insertChunk(db: Db, storageKey: string, seq: number, data: Buffer): Promise<void> {
  await db.insertInto('attachment_chunks').values({ storage_key: storageKey, seq, data }).execute();
}

/** One chunk's bytes (at most `chunkBytes`); undefined when there is no such chunk. */
export async function readChunk(
  db: Db,
  storageKey: string,
  seq: number,
  chunkBytes: number,
): Promise<Buffer | undefined> {
  const bytes = bytesOf(db, 'data', chunkBytes);
  const row = await db
    .selectFrom('attachment_chunks')
    .select(bytes.expressions)
    .where('storage_key', '=', storageKey)
    .where('seq', '=', seq)
    .executeTakeFirst();
  return row === undefined ? undefined : bytes.decode(row as Record<string, unknown>);
}

export async function deleteChunks(db: Db, storageKey: string): Promise<void> {
  await db.deleteFrom('attachment_chunks').where('storage_key', '=', storageKey).execute();
}
