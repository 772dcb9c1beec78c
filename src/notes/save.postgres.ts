import { CompiledQuery } from 'kysely';
import type { Db } from '../db/schema.js';
import { registerStatement } from '../db/statements.js';
import { encodeText } from '../db/values.js';
import { VERSION_MAX } from './version-rules.js';

/**
 * Saves on PostgreSQL in one round trip each: a new version and a new note are each one call of a
 * function (migration 2026-11-25-34-a-save-function, now its …_2 of 2026-11-27-81-o-ops3) doing what the transaction of statements
 * does on SQLite (notes.service.ts), where that transaction was six round trips here — BEGIN, four
 * writes, COMMIT — each paying the driver's cost in Node (BENCHMARKS.md, "Issue #28"). The two
 * forms are kept the same by every storage test, which runs on both databases. The calls are fixed
 * SQL texts (Kysely's builder does not write a function call in FROM), kept prepared by the
 * driver (src/db/postgres.ts).
 */

const SAVE_VERSION = `select saved_version as version, saved_at as updated_at
from vellum_save_version_2($1::uuid, $2::uuid, $3::uuid, $4::bytea, $5::bytea, $6::timestamptz, $7::int[], ${VERSION_MAX},
  $8::int, $9::uuid, $10::text, $11::text[], $12::uuid[], $13::tsvector)`;
registerStatement(SAVE_VERSION);

export interface SaveOnPostgres {
  ownerId: string;
  noteId: string;
  versionId: string;
  title: string;
  content: string;
  now: string;
  /** If-Match's versions; undefined: whatever the note is at. */
  expected: number[] | undefined;
  restoredFrom: number | null;
  authorId: string;
  /** The note's own tags as stored (encodeTags), and the rows it is found by (searchableTags). */
  tags: string;
  tagRows: string[];
  links: string[];
  tsvector: string;
}

/** The new version and update time, or undefined when nothing qualified (missing, stale, at the limit). */
export async function saveVersion(
  db: Db,
  s: SaveOnPostgres,
): Promise<{ version: number; updated_at: string } | undefined> {
  const { rows } = await db.executeQuery<{ version: number; updated_at: string }>(
    CompiledQuery.raw(SAVE_VERSION, [
      s.ownerId,
      s.noteId,
      s.versionId,
      encodeText(s.title),
      encodeText(s.content),
      s.now,
      s.expected ?? null,
      s.restoredFrom,
      s.authorId,
      s.tags,
      s.tagRows,
      s.links,
      s.tsvector,
    ]),
  );
  return rows[0];
}

const CREATE_NOTE = `select vellum_create_note_2($1::uuid, $2::uuid, $3::uuid, $4::bytea, $5::bytea, $6::timestamptz, $7::uuid,
  $8::text, $9::text[], $10::uuid[], $11::tsvector) as created`;
registerStatement(CREATE_NOTE);

export interface CreateOnPostgres {
  id: string;
  ownerId: string;
  versionId: string;
  title: string;
  content: string;
  now: string;
  folderId: string | null;
  tags: string;
  tagRows: string[];
  links: string[];
  tsvector: string;
}

/** False when the folder is not the owner's (or gone); a deleted account fails on its foreign key. */
export async function createNote(db: Db, c: CreateOnPostgres): Promise<boolean> {
  const { rows } = await db.executeQuery<{ created: boolean }>(
    CompiledQuery.raw(CREATE_NOTE, [
      c.id,
      c.ownerId,
      c.versionId,
      encodeText(c.title),
      encodeText(c.content),
      c.now,
      c.folderId,
      c.tags,
      c.tagRows,
      c.links,
      c.tsvector,
    ]),
  );
  return rows[0]!.created;
}
