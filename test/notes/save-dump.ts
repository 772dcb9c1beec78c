import { sql } from 'kysely';
import type { DatabaseKind } from '../helpers/databases.js';
import type { Db } from '../../src/db/schema.js';
import { ownerTerm, searchVector } from '../../src/search/search.index.js';
import { sortRows, type Rows } from './save-model.js';

/**
 * Every row a save writes for one user's notes, read straight from the tables and named by
 * creation order (N0 the first note, N0v2 its second version, A0 the first attachment, F0 the
 * folder, `me` the user), with times reduced to what the contract says of them: a note's update
 * time is its current version's. Search is read where each database keeps it — PostgreSQL's
 * `search_history` rows; SQLite's keys, their FTS5 rows (found by the owner term) and
 * `search_current` — as "which versions are indexed for whom" and "which are current".
 */

export interface Names {
  userId: string;
  notes: string[];
  attachments: string[];
  folders: string[];
}

const ms = (value: unknown) => new Date(value as string).getTime();

export async function dumpRows(kind: DatabaseKind, db: Db, names: Names): Promise<Rows> {
  const noteName = (id: string) => (names.notes.indexOf(id) >= 0 ? `N${names.notes.indexOf(id)}` : `?${id}`);
  const who = (id: string | null) => (id === null ? null : id === names.userId ? 'me' : `?${id}`);
  const noteIds = names.notes.length === 0 ? [''] : names.notes;
  const inNotes = sql.join(noteIds.map((id) => sql`${id}`));
  const inAttachments = sql.join(names.attachments.map((id) => sql`${id}`));

  const versions = (
    await sql<{
      id: string;
      note_id: string;
      version: number;
      title: string;
      content: string;
      restored_from: number | null;
      author_id: string | null;
      label: string | null;
      created_at: unknown;
    }>`
    select id, note_id, version, title, content, restored_from, author_id, label, created_at from note_versions where note_id in (${inNotes})`.execute(
      db,
    )
  ).rows;
  const versionName = new Map(versions.map((v) => [String(v.id), `${noteName(String(v.note_id))}v${v.version}`]));
  const vname = (id: string) => versionName.get(String(id)) ?? `?${id}`;
  const createdAt = new Map(versions.map((v) => [String(v.id), ms(v.created_at)]));

  const noteRows = (
    await sql<{
      id: string;
      owner_id: string;
      title: string;
      version: number;
      version_id: string;
      deleted_at: unknown;
      folder_id: string | null;
      pinned: unknown;
      archived: unknown;
      tags: string | null;
      tags_version_id: string | null;
      tags_listed: unknown;
      updated_at: unknown;
    }>`
    select id, owner_id, title, version, version_id, deleted_at, folder_id, pinned, archived, tags, tags_version_id,
      tags_listed, updated_at from notes
    where id in (${inNotes}) or owner_id = ${names.userId}`.execute(db)
  ).rows;

  const tags = (
    await sql<{ note_id: string; owner_id: string; tag: string }>`
    select note_id, owner_id, tag from note_tags where note_id in (${inNotes}) or owner_id = ${names.userId}`.execute(
      db,
    )
  ).rows;
  const refs = (
    await sql<{ version_id: string; attachment_id: string }>`
    select version_id, attachment_id from attachment_refs
    where attachment_id in (${inAttachments}) or version_id in (select id from note_versions where note_id in (${inNotes}))`.execute(
      db,
    )
  ).rows;

  const rows: Rows = {
    notes: noteRows.map((n) => ({
      note: noteName(String(n.id)),
      title: n.title,
      version: Number(n.version),
      current: vname(n.version_id),
      trashed: n.deleted_at !== null,
      folder:
        n.folder_id === null
          ? null
          : names.folders.includes(String(n.folder_id))
            ? `F${names.folders.indexOf(String(n.folder_id))}`
            : `?${n.folder_id}`,
      pinned: Boolean(n.pinned),
      archived: Boolean(n.archived),
      tags: n.tags ?? '<null>',
      tagsSettled: n.tags_version_id === n.version_id && Boolean(n.tags_listed) === (n.deleted_at === null),
      updatedIsCurrentVersion: ms(n.updated_at) === createdAt.get(String(n.version_id)),
    })),
    versions: versions.map((v) => ({
      id: vname(v.id),
      title: v.title,
      content: v.content,
      restored_from: v.restored_from === null ? null : Number(v.restored_from),
      author: who(v.author_id === null ? null : String(v.author_id)),
      label: v.label,
    })),
    note_tags: tags.map((t) => `${noteName(String(t.note_id))} ${t.tag} ${who(String(t.owner_id))}`),
    attachment_refs: refs.map((r) => {
      const a = names.attachments.indexOf(String(r.attachment_id));
      return `${vname(r.version_id)} ${a >= 0 ? `A${a}` : `?${r.attachment_id}`}`;
    }),
    ...(kind === 'postgres'
      ? await postgresSearch(db, names, inNotes, vname, noteName, who)
      : await sqliteSearch(db, names, inNotes, vname, noteName)),
  };
  return sortRows(rows);
}

type Namer = (id: string) => string;

/** An index entry names its version twice (its id, and its note and number): both must agree. */
function entryName(vname: Namer, noteName: Namer, e: { version_id: string; note_id: string; version: number }): string {
  const byId = vname(e.version_id);
  const byNumber = `${noteName(String(e.note_id))}v${e.version}`;
  return byId === byNumber ? byId : `${byId}~${byNumber}`;
}

async function postgresSearch(
  db: Db,
  names: Names,
  inNotes: ReturnType<typeof sql.join>,
  vname: Namer,
  noteName: Namer,
  who: (id: string | null) => string | null,
) {
  const entries = (
    await sql<{
      version_id: string;
      note_id: string;
      owner_id: string;
      version: number;
      tsv: string;
      title: string;
      content: string;
    }>`
    select h.version_id, h.note_id, h.owner_id, h.version, h.tsv::text as tsv, v.title, v.content
    from search_history h left join note_versions v on v.id = h.version_id
    where h.note_id in (${inNotes}) or h.owner_id = ${names.userId}`.execute(db)
  ).rows;
  // The entry holds the version's own terms: what searchVector makes of its text, as PostgreSQL prints it.
  const wanted =
    entries.length === 0
      ? []
      : (
          await sql<{ t: string }>`
    select t::tsvector::text as t from unnest(${entries.map((e) => searchVector(e.title ?? '', e.content ?? ''))}::text[]) with ordinality as u(t, i)
    order by i`.execute(db)
        ).rows.map((r) => r.t);
  // PostgreSQL's current search is the join of notes and their current version's entry.
  const current = (
    await sql<{ version_id: string; note_id: string; version: number }>`
    select h.version_id, h.note_id, h.version from notes n join search_history h on h.version_id = n.version_id
    where n.id in (${inNotes}) and n.deleted_at is null and not n.archived`.execute(db)
  ).rows;
  return {
    search_entries: entries.map(
      (e, i) =>
        `${entryName(vname, noteName, e)} ${who(String(e.owner_id))}${e.tsv === wanted[i] ? '' : ' tsv-differs'}`,
    ),
    search_current: current.map((e) => entryName(vname, noteName, e)),
  };
}

async function sqliteSearch(db: Db, names: Names, inNotes: ReturnType<typeof sql.join>, vname: Namer, noteName: Namer) {
  const keys = (
    await sql<{ id: number; version_id: string; note_id: string; version: number }>`
    select id, version_id, note_id, version from search_version_keys where note_id in (${inNotes})`.execute(db)
  ).rows;
  // Contentless FTS5 keeps no text to read back, but the owner column still matches its term.
  const owned = new Set(
    (
      await sql<{ rowid: number }>`
    select rowid from search_history where search_history match ${`owner : "${ownerTerm(names.userId)}"`}`.execute(db)
    ).rows.map((r) => Number(r.rowid)),
  );
  const current = (
    await sql<{ version_id: string; note_id: string; version: number }>`
    select k.version_id, k.note_id, k.version from search_current c join search_version_keys k on k.id = c.key
    where k.note_id in (${inNotes})`.execute(db)
  ).rows;
  const keyIds = new Set(keys.map((k) => Number(k.id)));
  return {
    search_entries: [
      ...keys.map((k) => `${entryName(vname, noteName, k)} ${owned.has(Number(k.id)) ? 'me' : 'no-fts-row'}`),
      // An FTS row of this owner without a key would be found by search and lead nowhere.
      ...[...owned].filter((rowid) => !keyIds.has(rowid)).map((rowid) => `?fts${rowid} me`),
    ],
    search_current: current.map((e) => entryName(vname, noteName, e)),
  };
}
