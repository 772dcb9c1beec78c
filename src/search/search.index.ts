import { CompiledQuery, sql } from 'kysely';
import { isPostgres } from '../db/dialect.js';
import type { Db } from '../db/schema.js';
import { registerStatement } from '../db/statements.js';
import { documentTerms } from './text.js';

/**
 * Keeps the search index in step with the notes: called with the caller's transaction for every
 * version written, so a search never misses a save that has answered, nor finds one rolled back.
 * Each version is indexed once (its text never changes); current search joins the index to each
 * note's current version. Entries leave through foreign keys: trash purges, account deletion and
 * history retention need not know about search.
 */

export interface VersionToIndex {
  ownerId: string;
  noteId: string;
  versionId: string;
  version: number;
  title: string;
  content: string;
}

// Written as fixed SQL texts: every save runs them, and building them with Kysely each time cost
// more than running them. The drivers keep them prepared (src/db/sqlite.ts, postgres.ts).
// On SQLite a trigger on this view writes the key and the FTS5 row (migration 2026-11-23-06-2).
const SQLITE_ENTRY =
  'insert into search_entries (version_id, note_id, version, owner, title, body) values (?, ?, ?, ?, ?, ?)';
const POSTGRES_ENTRY =
  'insert into search_history (version_id, note_id, owner_id, version, tsv) values ($1, $2, $3, $4, $5::tsvector)';
registerStatement(POSTGRES_ENTRY);

export async function indexVersion(db: Db, version: VersionToIndex): Promise<void> {
  if (isPostgres(db)) {
    const tsv = searchVector(version.title, version.content);
    await db.executeQuery(
      CompiledQuery.raw(POSTGRES_ENTRY, [version.versionId, version.noteId, version.ownerId, version.version, tsv]),
    );
    return;
  }
  const terms = documentTerms(version.title, version.content);
  await db.executeQuery(
    CompiledQuery.raw(SQLITE_ENTRY, [
      version.versionId,
      version.noteId,
      version.version,
      ownerTerm(version.ownerId),
      terms.title.join(' '),
      terms.body.join(' '),
    ]),
  );
}

/** A version's PostgreSQL index entry, as a tsvector literal (for a save made in one call, notes/save.postgres.ts). */
export function searchVector(title: string, content: string): string {
  const terms = documentTerms(title, content);
  return tsvectorText(terms.title, terms.body);
}

/** The owner as one FTS5 term, so that a match is confined to one user's notes inside the index. */
export function ownerTerm(ownerId: string): string {
  return `o${ownerId.replaceAll('-', '').toLowerCase()}`;
}

/** PostgreSQL keeps positions up to this value (larger ones are clamped) and 256 per lexeme. */
const MAX_POSITION = 16383;
const MAX_POSITIONS_PER_TERM = 256;

/**
 * A tsvector literal (never run through PostgreSQL's parser): title terms weighted A, content terms
 * after a one-position gap so that no phrase spans the two, as in SQLite's separate columns.
 */
export function tsvectorText(title: string[], body: string[]): string {
  const positions = new Map<string, string[]>();
  let position = 0;
  const add = (terms: string[], weight: string) => {
    for (const term of terms) {
      position += 1;
      let list = positions.get(term);
      if (list === undefined) positions.set(term, (list = []));
      // Past the last position a term still counts as present, at no position.
      if (position <= MAX_POSITION && list.length < MAX_POSITIONS_PER_TERM) list.push(`${position}${weight}`);
    }
  };
  add(title, 'A');
  position += 1;
  add(body, '');
  const parts: string[] = [];
  for (const [term, list] of positions) {
    const quoted = `'${term.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
    parts.push(list.length === 0 ? quoted : `${quoted}:${list.join(',')}`);
  }
  return parts.join(' ');
}

const BACKFILL_BATCH = 100;

/**
 * Indexes every version that has no index entry: the notes written before search existed (the
 * migration cannot fold text; this runs at start-up with the other maintenance tasks). New writes
 * index themselves, so after the first pass this finds nothing, at the cost of one anti-join.
 */
export async function indexMissingVersions(db: Db): Promise<{ versions: number }> {
  const entries = sql.table(isPostgres(db) ? 'search_history' : 'search_version_keys');
  let versions = 0;
  for (;;) {
    const { rows } = await sql<{
      id: string;
      note_id: string;
      version: number;
      title: string;
      content: string;
      owner_id: string;
    }>`
      select v.id, v.note_id, v.version, v.title, v.content, n.owner_id
      from note_versions v join notes n on n.id = v.note_id
      where not exists (select 1 from ${entries} e where e.version_id = v.id)
      limit ${BACKFILL_BATCH}`.execute(db);
    await db.transaction().execute(async (trx) => {
      for (const row of rows) {
        await indexVersion(trx, {
          ownerId: row.owner_id,
          noteId: row.note_id,
          versionId: row.id,
          version: row.version,
          title: row.title,
          content: row.content,
        });
      }
    });
    versions += rows.length;
    if (rows.length < BACKFILL_BATCH) return { versions };
  }
}
