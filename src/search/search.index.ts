import { sql } from 'kysely';
import { isPostgres } from '../db/dialect.js';
import type { Db } from '../db/schema.js';
import { documentTerms } from './text.js';

/**
 * Keeps the search indexes in step with the notes: called with the caller's transaction for every
 * version written, so a search never misses a save that has answered, nor finds one rolled back.
 */

export interface VersionToIndex {
  ownerId: string;
  noteId: string;
  versionId: string;
  version: number;
  title: string;
  content: string;
}

/**
 * Indexes a new version once, for history search, and with `current` also makes it the note's
 * entry in the current index (replacing the previous one). A version's text never changes, so
 * the history index is only ever appended to; deletes come through the foreign keys.
 */
export async function indexVersion(db: Db, version: VersionToIndex, options: { current: boolean }): Promise<void> {
  const terms = documentTerms(version.title, version.content);
  if (isPostgres(db)) {
    const tsv = tsvectorText(terms.title, terms.body);
    if (options.current) {
      await sql`with entry as (
          insert into search_history (version_id, note_id, owner_id, version, tsv)
          values (${version.versionId}, ${version.noteId}, ${version.ownerId}, ${version.version}, ${tsv}::tsvector)
          returning note_id, owner_id, tsv)
        insert into search_current (note_id, owner_id, tsv) select note_id, owner_id, tsv from entry
        on conflict (note_id) do update set tsv = excluded.tsv`.execute(db);
    } else {
      await sql`insert into search_history (version_id, note_id, owner_id, version, tsv)
        values (${version.versionId}, ${version.noteId}, ${version.ownerId}, ${version.version}, ${tsv}::tsvector)`.execute(db);
    }
    return;
  }
  const owner = ownerTerm(version.ownerId);
  const title = terms.title.join(' ');
  const body = terms.body.join(' ');
  const { rows: [versionKey] } = await sql<{ id: number }>`insert into search_version_keys (version_id, note_id, version)
    values (${version.versionId}, ${version.noteId}, ${version.version}) returning id`.execute(db);
  await sql`insert into search_history (rowid, owner, title, body) values (${versionKey!.id}, ${owner}, ${title}, ${body})`.execute(db);
  if (!options.current) return;
  const { rows: [noteKey] } = await sql<{ id: number }>`insert into search_note_keys (note_id) values (${version.noteId})
    on conflict (note_id) do update set note_id = excluded.note_id returning id`.execute(db);
  await sql`insert or replace into search_current (rowid, owner, title, body) values (${noteKey!.id}, ${owner}, ${title}, ${body})`.execute(db);
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
      if (position > MAX_POSITION) return;
      let list = positions.get(term);
      if (list === undefined) positions.set(term, (list = []));
      if (list.length < MAX_POSITIONS_PER_TERM) list.push(`${position}${weight}`);
    }
  };
  add(title, 'A');
  position += 1;
  add(body, '');
  // Terms past the last position still count as present (at no position), as PostgreSQL would.
  for (const term of body) if (!positions.has(term)) positions.set(term, []);
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
    const { rows } = await sql<{ id: string; note_id: string; version: number; title: string; content: string; owner_id: string; current: boolean | number }>`
      select v.id, v.note_id, v.version, v.title, v.content, n.owner_id, (n.version_id = v.id) as current
      from note_versions v join notes n on n.id = v.note_id
      where not exists (select 1 from ${entries} e where e.version_id = v.id)
      limit ${BACKFILL_BATCH}`.execute(db);
    await db.transaction().execute(async (trx) => {
      for (const row of rows) {
        await indexVersion(trx, {
          ownerId: row.owner_id, noteId: row.note_id, versionId: row.id, version: row.version, title: row.title, content: row.content,
        }, { current: row.current === true || row.current === 1 });
      }
    });
    versions += rows.length;
    if (rows.length < BACKFILL_BATCH) return { versions };
  }
}
