import http from 'node:http';
import type { Db } from '../../src/db/schema.js';
import { newId } from '../../src/shared/ids.js';

export interface BulkNote {
  title: string;
  content: string;
  created_at: string;
  updated_at: string;
}

/** Rows per insert statement: PostgreSQL takes at most 65,535 parameters in one statement. */
const ROWS_PER_STATEMENT = 500;

/**
 * Test setup only: notes with one version each, written straight to the tables in multi-row
 * inserts (no search indexing, no validation), so a large account or one with dates the import
 * route refuses takes seconds, not minutes. What is exported is what is in these two tables.
 */
export async function insertNotes(db: Db, ownerId: string, notes: BulkNote[]): Promise<string[]> {
  const ids = notes.map(() => newId());
  await db.transaction().execute(async (trx) => {
    for (let start = 0; start < notes.length; start += ROWS_PER_STATEMENT) {
      const chunk = notes.slice(start, start + ROWS_PER_STATEMENT);
      const rows = chunk.map((note, i) => ({ note, id: ids[start + i]!, versionId: newId() }));
      await trx
        .insertInto('notes')
        .values(
          rows.map(({ note, id, versionId }) => ({
            id,
            owner_id: ownerId,
            title: Buffer.from(note.title, 'utf8'),
            version: 1,
            version_id: versionId,
            created_at: note.created_at,
            updated_at: note.updated_at,
          })),
        )
        .execute();
      await trx
        .insertInto('note_versions')
        .values(
          rows.map(({ note, id, versionId }) => ({
            id: versionId,
            note_id: id,
            version: 1,
            title: Buffer.from(note.title, 'utf8'),
            content: Buffer.from(note.content, 'utf8'),
            created_at: note.updated_at,
          })),
        )
        .execute();
    }
  });
  return ids;
}

/** `count` small notes, one a millisecond apart from 2025-01-01, titled "Note 1", "Note 2"... */
export function manyNotes(count: number): BulkNote[] {
  const base = Date.UTC(2025, 0, 1);
  return Array.from({ length: count }, (_, i) => {
    const at = new Date(base + i).toISOString();
    return {
      title: `Note ${i + 1}`,
      content: `Body of note ${i + 1}\n\nSome text to export.`,
      created_at: at,
      updated_at: at,
    };
  });
}

export interface ZipEntry {
  /** The name as stored: raw bytes, and decoded as UTF-8. */
  nameBytes: Buffer;
  name: string;
  /** The DOS date and time fields, decoded as written (DOS time has no zone). */
  dos: string;
  /** The Info-ZIP "UT" extra field's modification time (Unix seconds), when present. */
  unixTime: number | undefined;
}

/** The central directory of a zip, read by hand: what fflate's unzip does not show (times, raw names). */
export function zipDirectory(zip: Buffer): ZipEntry[] {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) throw new Error('no end of central directory record');
  const entries: ZipEntry[] = [];
  let at = zip.readUInt32LE(eocd + 16);
  if (at === 0xffffffff || zip.readUInt16LE(eocd + 10) === 0xffff) {
    // ZIP64 (over 65,535 entries): the locator just before the record points to the ZIP64 record.
    const locator = eocd - 20;
    if (zip.readUInt32LE(locator) !== 0x07064b50) throw new Error('no ZIP64 end of central directory locator');
    at = Number(zip.readBigUInt64LE(Number(zip.readBigUInt64LE(locator + 8)) + 48));
  }
  while (zip.readUInt32LE(at) === 0x02014b50) {
    const time = zip.readUInt16LE(at + 12);
    const date = zip.readUInt16LE(at + 14);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const nameBytes = zip.subarray(at + 46, at + 46 + nameLength);
    let unixTime: number | undefined;
    for (let e = at + 46 + nameLength; e < at + 46 + nameLength + extraLength; ) {
      const tag = zip.readUInt16LE(e);
      const size = zip.readUInt16LE(e + 2);
      if (tag === 0x5455) unixTime = zip.readInt32LE(e + 5);
      e += 4 + size;
    }
    const pad = (n: number) => String(n).padStart(2, '0');
    const dos = `${(date >> 9) + 1980}-${pad((date >> 5) & 0xf)}-${pad(date & 0x1f)} ${pad(time >> 11)}:${pad((time >> 5) & 0x3f)}:${pad((time & 0x1f) * 2)}`;
    entries.push({ nameBytes, name: nameBytes.toString('utf8'), dos, unixTime });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

export interface Download {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** Whether the response arrived whole (for chunked bodies: the terminating chunk was read). */
  complete: boolean;
}

/** One GET over a real connection, resolved however it ends: whole, or cut off by the server. */
export function download(base: string, path: string, headers: Record<string, string>): Promise<Download> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${base}${path}`, { headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      const done = () =>
        resolve({
          status: response.statusCode!,
          headers: response.headers,
          body: Buffer.concat(chunks),
          complete: response.complete,
        });
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', done);
      // A response cut off mid-body ends in 'error' ("aborted") rather than 'end'.
      response.on('error', done);
      response.on('close', done);
    });
    request.on('error', reject);
  });
}
