import { sql } from 'kysely';
import type { Db } from '../db/schema.js';

/** Reads for export and writes for import. Live notes only: the trash is not exported. */

export interface NoteHead {
  id: string;
  title: string;
  created_at: string;
  updated_at: string;
  folder_id: string | null;
  pinned: boolean;
  archived: boolean;
}

/**
 * One page of the caller's notes, oldest first, after `after` (keyset: created_at, then id), read
 * along the index notes_owner_created. The `created_at >=` bound is what lets both databases start
 * the index scan at the page instead of filtering every earlier note; the `or` only settles ties.
 */
export function notesPage(
  db: Db,
  ownerId: string,
  after: { created_at: string; id: string } | undefined,
  limit: number,
): Promise<NoteHead[]> {
  let query = db
    .selectFrom('notes')
    .select(['id', 'title', 'created_at', 'updated_at', 'folder_id', 'pinned', 'archived'])
    .where('owner_id', '=', ownerId)
    .where('deleted_at', 'is', null);
  if (after !== undefined) {
    query = query
      .where('created_at', '>=', after.created_at)
      .where((eb) => eb.or([eb('created_at', '>', after.created_at), eb('id', '>', after.id)]));
  }
  return query.orderBy('created_at').orderBy('id').limit(limit).execute();
}

export interface VersionRecord {
  version: number;
  title: string;
  content: string;
  created_at: string;
  label: string | null;
  restored_from: number | null;
}

/** Versions of one note with numbers above `after`, oldest first. */
export async function versionsPage(db: Db, noteId: string, after: number, limit: number): Promise<VersionRecord[]> {
  const rows = await db
    .selectFrom('note_versions')
    .selectAll()
    .where('note_id', '=', noteId)
    .where('version', '>', after)
    .orderBy('version')
    .limit(limit)
    .execute();
  // label and restored_from come with version metadata (#11); absent columns read as null.
  return rows.map((row) => {
    const meta = row as unknown as { label?: string | null; restored_from?: number | null };
    return {
      version: row.version,
      title: row.title,
      content: row.content,
      created_at: row.created_at,
      label: meta.label ?? null,
      restored_from: meta.restored_from ?? null,
    };
  });
}

export function currentContent(db: Db, ownerId: string, noteId: string) {
  return db
    .selectFrom('notes as n')
    .innerJoin('note_versions as v', 'v.id', 'n.version_id')
    .select(['n.title', 'v.content'])
    .where('n.id', '=', noteId)
    .where('n.owner_id', '=', ownerId)
    .executeTakeFirst();
}

export function usernameOf(db: Db, userId: string): Promise<string | undefined> {
  return db
    .selectFrom('users')
    .select('username')
    .where('id', '=', userId)
    .executeTakeFirst()
    .then((row) => row?.username);
}

/** Whether note_versions has the version metadata columns (label, restored_from) yet. */
export async function hasVersionMetadata(db: Db): Promise<boolean> {
  try {
    await sql`select label, restored_from from note_versions where 1 = 0`.execute(db);
    return true;
  } catch {
    return false;
  }
}
