import { Readable } from 'node:stream';
import type { Db } from '../db/schema.js';
import { deleteChunks, insertChunk, readChunk } from './chunks.repository.js';
import type { AttachmentStorage } from './storage.js';

/** 256 KiB: a 25 MiB file is 100 rows, and no row is large enough to strain either driver. */
export const CHUNK_BYTES = 256 * 1024;

/**
 * The bytes in the database itself, in chunks: every instance sharing the database sees every
 * file, one backup holds everything, and no file is ever whole in memory. Chunks go with their
 * blob row (foreign key, cascade), which the upload creates before the first chunk.
 */
export function databaseStorage(db: Db): AttachmentStorage {
  return {
    kind: 'database',
    async put(key, body) {
      let seq = 0;
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      const flush = async (all: boolean) => {
        let buffer = Buffer.concat(pending, pendingBytes);
        while (buffer.length >= CHUNK_BYTES || (all && buffer.length > 0)) {
          const piece = buffer.subarray(0, CHUNK_BYTES);
          await insertChunk(db, key, seq, piece);
          seq++;
          // SQLite writes on the event loop, and buffered chunks arrive without a pause between
          // them: a turn after each write lets other requests in between (BENCHMARKS.md, "Attachments").
          await new Promise((resolve) => setImmediate(resolve));
          buffer = buffer.subarray(piece.length);
        }
        pending = buffer.length > 0 ? [buffer] : [];
        pendingBytes = buffer.length;
      };
      for await (const chunk of body) {
        pending.push(chunk);
        pendingBytes += chunk.length;
        if (pendingBytes >= CHUNK_BYTES) await flush(false);
      }
      await flush(true);
    },
    get(key, size, range = { start: 0, end: size - 1 }) {
      async function* chunks() {
        if (range.end < range.start) return;
        for (let seq = Math.floor(range.start / CHUNK_BYTES); seq <= Math.floor(range.end / CHUNK_BYTES); seq++) {
          const data = await readChunk(db, key, seq, CHUNK_BYTES);
          if (data === undefined) throw new Error(`attachment chunk ${seq} of ${key} is missing`);
          const offset = seq * CHUNK_BYTES;
          yield data.subarray(Math.max(0, range.start - offset), Math.min(data.length, range.end - offset + 1));
        }
      }
      return Readable.from(chunks(), { objectMode: false });
    },
    async delete(key) {
      await deleteChunks(db, key);
    },
  };
}
