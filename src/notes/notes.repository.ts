import { sql } from 'kysely';
import { compiled } from '../db/compiled.js';
import { textPrefix } from '../db/dialect.js';
import type { Db, Trx } from '../db/schema.js';
import { encodeText } from '../db/values.js';
import { VERSION_MAX } from './version-rules.js';

export interface NoteRecord {
  id: string;
  owner_id: string;
  title: string;
  content: string;
  version: number;
  version_id: string;
  created_at: string;
  updated_at: string;
  folder_id: string | null;
  pinned: boolean;
  archived: boolean;
  /** As stored: see decodeTags. */
  tags: string | null;
}

/** What a list row and a full note say about where the note is filed. */
const FILING = ['folder_id', 'pinned', 'archived', 'tags'] as const;

const insertNoteQuery = compiled(
  (
    db,
    p: {
      id: string;
      owner_id: string;
      title: Buffer;
      version_id: string;
      now: string;
      folder_id: string | null;
      tags: string;
    },
  ) =>
    db.insertInto('notes').values({
      id: p.id,
      owner_id: p.owner_id,
      title: p.title,
      version: 1,
      version_id: p.version_id,
      created_at: p.now,
      updated_at: p.now,
      folder_id: p.folder_id,
      tags: p.tags,
      tags_version_id: p.version_id,
    }),
);

export async function insertNote(
  db: Db,
  note: {
    id: string;
    owner_id: string;
    title: string;
    version_id: string;
    now: string;
    folder_id?: string | null;
    tags?: string;
  },
): Promise<void> {
  await insertNoteQuery.run(db, {
    ...note,
    title: encodeText(note.title),
    folder_id: note.folder_id ?? null,
    tags: note.tags ?? '',
  });
}

const insertVersionQuery = compiled(
  (
    db,
    p: {
      id: string;
      note_id: string;
      version: number;
      title: Buffer;
      content: Buffer;
      created_at: string;
      restored_from: number | null;
      author_id: string;
    },
  ) =>
    db.insertInto('note_versions').values({
      id: p.id,
      note_id: p.note_id,
      version: p.version,
      title: p.title,
      content: p.content,
      created_at: p.created_at,
      restored_from: p.restored_from,
      author_id: p.author_id,
    }),
);

export async function insertVersion(
  db: Db,
  version: {
    id: string;
    note_id: string;
    version: number;
    title: string;
    content: string;
    created_at: string;
    restored_from?: number | null;
    author_id: string;
  },
): Promise<void> {
  await insertVersionQuery.run(db, {
    ...version,
    title: encodeText(version.title),
    content: encodeText(version.content),
    restored_from: version.restored_from ?? null,
  });
}

/** Everyone who wrote a version, in order (a live session's version: src/collab). */
export async function insertVersionAuthors(db: Db, versionId: string, userIds: readonly string[]): Promise<void> {
  if (userIds.length === 0) return;
  // An account deleted during the live session is left out (its rows went with it), not a failed
  // version: the key to users would refuse the whole write, and every later one of the session.
  const existing = new Set(
    (
      await db
        .selectFrom('users')
        .select('id')
        .where('id', 'in', [...userIds])
        .execute()
    ).map((row) => row.id),
  );
  const rows = userIds
    .map((user_id, position) => ({ version_id: versionId, position, user_id }))
    .filter((row) => existing.has(row.user_id));
  if (rows.length === 0) return;
  await db.insertInto('note_version_authors').values(rows).execute();
}

/** The authors of each of these versions that has several, by version id, in order. */
export async function versionAuthors(db: Db, versionIds: readonly string[]): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  if (versionIds.length === 0) return found;
  const rows = await db
    .selectFrom('note_version_authors as va')
    .innerJoin('users as u', 'u.id', 'va.user_id')
    .select(['va.version_id', 'u.username'])
    .where('va.version_id', 'in', versionIds)
    .orderBy('va.version_id')
    .orderBy('va.position')
    .execute();
  for (const row of rows) {
    const list = found.get(row.version_id) ?? [];
    list.push(row.username);
    found.set(row.version_id, list);
  }
  return found;
}

const findNoteQuery = compiled((db, p: { ownerId: string; noteId: string }) =>
  db
    .selectFrom('notes as n')
    .innerJoin('note_versions as v', 'v.id', 'n.version_id')
    .select([
      'n.id',
      'n.owner_id',
      'n.title',
      'v.content',
      'n.version',
      'n.version_id',
      'n.created_at',
      'n.updated_at',
      'n.folder_id',
      'n.pinned',
      'n.archived',
      'n.tags',
    ])
    .where('n.id', '=', p.noteId)
    .where('n.owner_id', '=', p.ownerId)
    .where('n.deleted_at', 'is', null),
);

/** The note with its current version's content: two primary-key look-ups, no history scan. */
export function findNote(db: Db, ownerId: string, noteId: string): Promise<NoteRecord | undefined> {
  return findNoteQuery.takeFirst(db, { ownerId, noteId });
}

const findNoteVersionNumberQuery = compiled((db, p: { ownerId: string; noteId: string }) =>
  db
    .selectFrom('notes')
    .select(['version', 'pruned'])
    .where('id', '=', p.noteId)
    .where('owner_id', '=', p.ownerId)
    .where('deleted_at', 'is', null),
);

/** The current version number and how many versions retention removed, for history pages. */
export function findNoteHistoryShape(
  db: Db,
  ownerId: string,
  noteId: string,
): Promise<{ version: number; pruned: number } | undefined> {
  return findNoteVersionNumberQuery.takeFirst(db, { ownerId, noteId });
}

export async function findNoteVersionNumber(db: Db, ownerId: string, noteId: string): Promise<number | undefined> {
  return (await findNoteVersionNumberQuery.takeFirst(db, { ownerId, noteId }))?.version;
}

/** GET /notes filters; each is optional. `folder` null is the top level. */
export interface NoteFilter {
  folder?: string | null;
  tag?: string;
  pinned?: boolean;
  archived: boolean;
}

/** The caller's notes that `filter` lets through (outside the trash). */
function filtered(db: Db, ownerId: string, filter: NoteFilter) {
  let query = db
    .selectFrom('notes')
    .where('owner_id', '=', ownerId)
    .where('deleted_at', 'is', null)
    .where('archived', '=', filter.archived);
  if (filter.folder !== undefined)
    query =
      filter.folder === null ? query.where('folder_id', 'is', null) : query.where('folder_id', '=', filter.folder);
  if (filter.pinned !== undefined) query = query.where('pinned', '=', filter.pinned);
  if (filter.tag !== undefined) {
    const tag = filter.tag;
    // A probe of note_tags' primary key (note_id, tag) per note. Written without the owner on purpose:
    // with it, PostgreSQL without statistics yet (a freshly filled table) chose to rescan the
    // (owner, tag) range for every note — 2,000 notes took 550 ms instead of 7 ms.
    query = query.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('note_tags as t')
          .select('t.note_id')
          .whereRef('t.note_id', '=', 'notes.id')
          .where('t.tag', '=', tag),
      ),
    );
  }
  return query;
}

/**
 * The caller's notes, pinned first, then most recently updated: a range scan of notes_owner_list
 * or, within a folder, notes_owner_folder; a tag is a primary-key probe of note_tags per note.
 */
export async function listNotes(
  db: Db,
  ownerId: string,
  filter: NoteFilter,
  page: { limit: number; offset: number } | undefined,
) {
  let query = filtered(db, ownerId, filter)
    // version_id: the current version, whose preview (preview.ts) may be known already.
    .select(['id', 'owner_id', 'title', 'updated_at', 'version_id', ...FILING])
    .orderBy('pinned', 'desc')
    .orderBy('updated_at', 'desc')
    .orderBy('id', 'desc');
  if (page !== undefined) query = query.limit(page.limit).offset(page.offset);
  return query.execute();
}

/** The first `bytes` bytes of each version's text, by version id: only that much leaves the database. */
export async function versionHeads(db: Db, versionIds: string[], bytes: number): Promise<Map<string, string>> {
  const head = textPrefix(db, 'content', bytes);
  const heads = new Map<string, string>();
  // In slices: an unpaged list can hold more notes than a statement may have parameters.
  for (let at = 0; at < versionIds.length; at += 500) {
    const rows = await db
      .selectFrom('note_versions')
      .select(['id', head.expression.as('head')])
      .where('id', 'in', versionIds.slice(at, at + 500))
      .execute();
    for (const row of rows) heads.set(row.id, head.decode(row.head));
  }
  return heads;
}

/** How many notes listNotes would return without a page: the same index ranges, counted. */
export async function countNotes(db: Db, ownerId: string, filter: NoteFilter): Promise<number> {
  const row = await filtered(db, ownerId, filter)
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Files a note (folder, pin, archive): no new version, no new update time. */
export async function fileNote(
  db: Db,
  ownerId: string,
  noteId: string,
  change: { folder_id?: string | null; pinned?: boolean; archived?: boolean },
): Promise<boolean> {
  const result = await db
    .updateTable('notes')
    .set(change)
    .where('id', '=', noteId)
    .where('owner_id', '=', ownerId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** A note's own tags, after a save changed them (its tag rows are written anew with them). */
export async function setNoteTags(db: Db, noteId: string, tags: string): Promise<void> {
  await db.updateTable('notes').set({ tags, tags_listed: true }).where('id', '=', noteId).execute();
}

/**
 * The back-fill's write: only while no save has derived them meanwhile. `listed`: whether the
 * caller writes the tag rows (the note was outside the trash when read).
 */
export async function setMissingNoteTags(
  db: Db,
  noteId: string,
  versionId: string,
  tags: string,
  listed: boolean,
): Promise<boolean> {
  const result = await db
    .updateTable('notes')
    .set({ tags, tags_version_id: versionId, tags_listed: listed })
    .where('id', '=', noteId)
    .where('version_id', '=', versionId)
    .where('tags', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Notes whose tags were never derived (written before tags existed), for the back-fill. */
export function notesWithoutTags(db: Db, limit: number) {
  return db
    .selectFrom('notes as n')
    .innerJoin('note_versions as v', 'v.id', 'n.version_id')
    .select(['n.id', 'n.owner_id', 'n.deleted_at', 'n.version_id', 'v.content'])
    .where('n.tags', 'is', null)
    .limit(limit)
    .execute();
}

/**
 * Notes whose tags or tag rows an older release's write left behind (notes_tags_unsettled): it
 * saved a version (`version_id` moved on without `tags_version_id`), created a note, or moved one
 * into or out of the trash without its rows (`tags_listed` says the opposite of `deleted_at`);
 * and, once after the migration that added them, every note (no version recorded yet).
 * The condition is the partial index's own, word for word, so both databases read that index,
 * which holds nothing while every write is this build's.
 */
export function notesWithUnsettledTags(db: Db, limit: number) {
  return db
    .selectFrom('notes as n')
    .innerJoin('note_versions as v', 'v.id', 'n.version_id')
    .select(['n.id', 'n.owner_id', 'n.deleted_at', 'n.version_id', 'n.tags', 'n.tags_listed', 'v.content'])
    .where(sql<boolean>`n.tags_version_id is distinct from n.version_id or n.tags_listed = (n.deleted_at is not null)`)
    .limit(limit)
    .execute();
}

/**
 * The back-fill's write for such a note: its tags derived from `versionId`, and its rows written
 * (`listed`) or taken out, as the caller then does. Only while the note is still at that version
 * and on the same side of the trash (a write since is this build's and kept them, or is looked at
 * by the next pass); returns whether it wrote.
 */
export async function settleNoteTags(
  db: Db,
  note: { id: string; versionId: string; tags: string; listed: boolean },
): Promise<boolean> {
  const result = await db
    .updateTable('notes')
    .set({ tags: note.tags, tags_version_id: note.versionId, tags_listed: note.listed })
    .where('id', '=', note.id)
    .where('version_id', '=', note.versionId)
    .where('deleted_at', note.listed ? 'is' : 'is not', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Deleting a folder: its notes (those `folderIds` hold) go to the trash, or, with TRASH_DAYS=0,
 * are deleted at once. Returns the ids of the notes it took.
 */
export async function trashNotesInFolders(
  db: Db,
  ownerId: string,
  folderIds: readonly string[],
  now: string | null,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < folderIds.length; i += 500) {
    const chunk = folderIds.slice(i, i + 500);
    const rows =
      now === null
        ? await db
            .deleteFrom('notes')
            .where('owner_id', '=', ownerId)
            .where('deleted_at', 'is', null)
            .where('folder_id', 'in', chunk)
            .returning('id')
            .execute()
        : await db
            .updateTable('notes')
            .set({ deleted_at: now, tags_listed: false })
            .where('owner_id', '=', ownerId)
            .where('deleted_at', 'is', null)
            .where('folder_id', 'in', chunk)
            .returning('id')
            .execute();
    ids.push(...rows.map((row) => row.id));
  }
  return ids;
}

const deleteNoteQuery = compiled((db, p: { ownerId: string; noteId: string }) =>
  db.deleteFrom('notes').where('id', '=', p.noteId).where('owner_id', '=', p.ownerId).where('deleted_at', 'is', null),
);

/** Deletes a note that is not in the trash, with its history, for good. */
export async function deleteNote(db: Db, ownerId: string, noteId: string): Promise<boolean> {
  const result = await deleteNoteQuery.run(db, { ownerId, noteId });
  return (result.numAffectedRows ?? 0n) > 0n;
}

const trashNoteQuery = compiled((db, p: { ownerId: string; noteId: string; now: string }) =>
  db
    .updateTable('notes')
    .set({ deleted_at: p.now, tags_listed: false })
    .where('id', '=', p.noteId)
    .where('owner_id', '=', p.ownerId)
    .where('deleted_at', 'is', null),
);

/** Moves a note that is not in the trash into it. */
export async function trashNote(db: Db, ownerId: string, noteId: string, now: string): Promise<boolean> {
  const result = await trashNoteQuery.run(db, { ownerId, noteId, now });
  return (result.numAffectedRows ?? 0n) > 0n;
}

interface VersionChange {
  ownerId: string;
  noteId: string;
  versionId: string;
  title: Buffer;
  now: string;
}

function advanceVersionBuilder(db: Db, p: VersionChange) {
  return (
    db
      .updateTable('notes')
      .set((eb) => ({
        version: eb('version', '+', 1),
        version_id: p.versionId,
        title: p.title,
        updated_at: sql<string>`case when updated_at > ${p.now} then updated_at else ${p.now} end`,
        // The caller keeps the tags right for this version: it rewrites them when they changed.
        tags_version_id: p.versionId,
      }))
      .where('id', '=', p.noteId)
      .where('owner_id', '=', p.ownerId)
      .where('deleted_at', 'is', null)
      // At the highest number nothing qualifies (PostgreSQL would fail with "integer out of range",
      // SQLite would go past it); the caller tells that apart from a stale If-Match.
      .where('version', '<', VERSION_MAX)
  );
}

// `tags` is not set here, so it returns the tags before this save: the caller rewrites them only if they changed.
const advanceVersionQuery = compiled((db, p: VersionChange) =>
  advanceVersionBuilder(db, p).returning(['version', 'updated_at', 'tags']),
);

/** With If-Match: one expected version is the usual case; lists of several are built each time. */
const advanceVersionIfQuery = compiled((db, p: VersionChange & { expected: number }) =>
  advanceVersionBuilder(db, p).where('version', '=', p.expected).returning(['version', 'updated_at', 'tags']),
);

/**
 * Moves the note to its next version number and returns it with the new update time. The UPDATE
 * takes the row's write lock (PostgreSQL) or the database's (SQLite) until the caller's transaction
 * ends, so concurrent writers queue up and numbers never repeat or skip. With `expected`, only that
 * current version qualifies, and a note already at VERSION_MAX never does. A writer that waited for the lock may carry an older clock reading
 * than the version before it; the time then stays at that version's, so it never goes backwards.
 */
export async function advanceVersion(
  db: Db,
  change: {
    ownerId: string;
    noteId: string;
    versionId: string;
    title: string;
    now: string;
    expected: number[] | undefined;
  },
): Promise<{ version: number; updated_at: string; tags: string | null } | undefined> {
  const { expected } = change;
  if (expected?.length === 0) return undefined;
  const p: VersionChange = {
    ownerId: change.ownerId,
    noteId: change.noteId,
    versionId: change.versionId,
    title: encodeText(change.title),
    now: change.now,
  };
  if (expected === undefined) return advanceVersionQuery.takeFirst(db, p);
  if (expected.length === 1) return advanceVersionIfQuery.takeFirst(db, { ...p, expected: expected[0]! });
  return advanceVersionBuilder(db, p)
    .where('version', 'in', expected)
    .returning(['version', 'updated_at', 'tags'])
    .executeTakeFirst();
}

const VERSION_ROW = [
  'v.id',
  'v.title',
  'v.version',
  'v.created_at',
  'v.label',
  'v.restored_from',
  'a.username as author_username',
] as const;

const listVersionsQuery = compiled((db, p: { noteId: string; top: number; limit: number }) =>
  db
    .selectFrom('note_versions as v')
    .leftJoin('users as a', 'a.id', 'v.author_id')
    .select(VERSION_ROW)
    .where('v.note_id', '=', p.noteId)
    .where('v.version', '<=', p.top)
    .orderBy('v.version', 'desc')
    .limit(p.limit),
);

const versionAtOffsetQuery = compiled((db, p: { noteId: string; offset: number }) =>
  db
    .selectFrom('note_versions')
    .select('version')
    .where('note_id', '=', p.noteId)
    .orderBy('version', 'desc')
    .limit(1)
    .offset(p.offset),
);

/**
 * One page of history, newest first: a keyset scan down from the page's top version number, on
 * the (note_id, version) key, whatever the depth. Without gaps (nothing pruned) the top is simply
 * current − offset. With gaps the offset counts the versions that remain, so the top is found by
 * skipping `offset` entries of that key — numbers only, from the index — which retention keeps short.
 */
export async function listVersions(
  db: Db,
  noteId: string,
  shape: { version: number; pruned: number },
  limit: number,
  offset: number,
) {
  let top = shape.version - offset;
  if (shape.pruned > 0) {
    const row = await versionAtOffsetQuery.takeFirst(db, { noteId, offset });
    if (row === undefined) return [];
    top = row.version;
  }
  return listVersionsQuery.execute(db, { noteId, top, limit });
}

/** A version of the owner's note (outside the trash), with its author's name: the two look-ups below narrow it. */
const versionOfNote = (db: Db, p: { ownerId: string; noteId: string }) =>
  db
    .selectFrom('note_versions as v')
    .innerJoin('notes as n', 'n.id', 'v.note_id')
    .leftJoin('users as a', 'a.id', 'v.author_id')
    .select([
      'v.id',
      'v.note_id',
      'v.title',
      'v.content',
      'v.version',
      'v.created_at',
      'v.label',
      'v.restored_from',
      'a.username as author_username',
    ])
    .where('v.note_id', '=', p.noteId)
    .where('n.owner_id', '=', p.ownerId)
    .where('n.deleted_at', 'is', null);

const findVersionQuery = compiled((db, p: { ownerId: string; noteId: string; versionId: string }) =>
  versionOfNote(db, p).where('v.id', '=', p.versionId),
);

export function findVersion(db: Db, ownerId: string, noteId: string, versionId: string) {
  return findVersionQuery.takeFirst(db, { ownerId, noteId, versionId });
}

export interface VersionRecord {
  id: string;
  note_id: string;
  title: string;
  content: string;
  version: number;
  created_at: string;
  label: string | null;
  restored_from: number | null;
  /** Who wrote it; null once that account is deleted. */
  author_username: string | null;
}

const findVersionByNumberQuery = compiled((db, p: { ownerId: string; noteId: string; version: number }) =>
  versionOfNote(db, p).where('v.version', '=', p.version),
);

export async function findVersionByNumber(
  db: Db,
  ownerId: string,
  noteId: string,
  version: number,
): Promise<VersionRecord | undefined> {
  if (version > VERSION_MAX) return undefined; // a larger number names no version (and cannot be bound as one)
  return findVersionByNumberQuery.takeFirst(db, { ownerId, noteId, version });
}

const previousVersionNumberQuery = compiled((db, p: { noteId: string; below: number }) =>
  db
    .selectFrom('note_versions')
    .select('version')
    .where('note_id', '=', p.noteId)
    .where('version', '<', p.below)
    .orderBy('version', 'desc')
    .limit(1),
);

/** The newest version that still exists below `below` (retention may have removed the one just before). */
export async function previousVersionNumber(db: Db, noteId: string, below: number): Promise<number | undefined> {
  return (await previousVersionNumberQuery.takeFirst(db, { noteId, below }))?.version;
}

const setLabelQuery = compiled((db, p: { ownerId: string; noteId: string; versionId: string; label: string | null }) =>
  db
    .updateTable('note_versions')
    .set({ label: p.label })
    .where('id', '=', p.versionId)
    .where('note_id', '=', p.noteId)
    .where('note_id', 'in', (eb) =>
      eb
        .selectFrom('notes')
        .select('id')
        .where('id', '=', p.noteId)
        .where('owner_id', '=', p.ownerId)
        .where('deleted_at', 'is', null),
    ),
);

export async function setLabel(
  db: Db,
  ownerId: string,
  noteId: string,
  versionId: string,
  label: string | null,
): Promise<boolean> {
  const result = await setLabelQuery.run(db, { ownerId, noteId, versionId, label });
  return (result.numAffectedRows ?? 0n) > 0n;
}

/** Import: a note row as the document gives it (its last version is written next, with this id). */
export async function insertImportedNote(
  trx: Trx,
  note: {
    id: string;
    ownerId: string;
    title: string;
    version: number;
    versionId: string;
    createdAt: string;
    updatedAt: string;
    versions: number;
    folderId: string | null;
    pinned: boolean;
    archived: boolean;
    tags: string;
  },
): Promise<void> {
  await trx
    .insertInto('notes')
    .values({
      id: note.id,
      owner_id: note.ownerId,
      title: Buffer.from(note.title, 'utf8'),
      version: note.version,
      version_id: note.versionId,
      created_at: note.createdAt,
      updated_at: note.updatedAt,
      folder_id: note.folderId,
      pinned: note.pinned,
      archived: note.archived,
      tags: note.tags,
      tags_version_id: note.versionId,
      // Numbers may skip (a pruned history); history pages need to know (see listVersions).
      pruned: note.version - note.versions,
    })
    .execute();
}

/**
 * Import: the caller's note (outside the trash) that an imported note would repeat — the same
 * title, creation and last-change times, current version number and number of versions — which
 * is what importing the same export again finds.
 */
export async function findImportedTwin(
  trx: Trx,
  ownerId: string,
  note: {
    title: string;
    createdAt: string;
    updatedAt: string;
    version: number;
    versions: number;
  },
): Promise<string | undefined> {
  const row = await trx
    .selectFrom('notes')
    .select('id')
    .where('owner_id', '=', ownerId)
    .where('updated_at', '=', note.updatedAt)
    .where('created_at', '=', note.createdAt)
    .where('version', '=', note.version)
    .where('pruned', '=', note.version - note.versions)
    .where(sql<boolean>`title = ${encodeText(note.title)}`)
    .where('deleted_at', 'is', null)
    .limit(1)
    .executeTakeFirst();
  return row?.id;
}

/**
 * Import of a Markdown file (one version, no history): the caller's live note of that id (the
 * front matter's, where the export wrote one), else one with the same title and created_at.
 */
export async function findSameNote(
  trx: Trx,
  ownerId: string,
  note: { id: string | null; title: string; createdAt: string },
): Promise<string | undefined> {
  const live = trx.selectFrom('notes').select('id').where('owner_id', '=', ownerId).where('deleted_at', 'is', null);
  if (note.id !== null) {
    const row = await live.where('id', '=', note.id).limit(1).executeTakeFirst();
    if (row !== undefined) return row.id;
  }
  const row = await live
    .where('created_at', '=', note.createdAt)
    .where(sql<boolean>`title = ${encodeText(note.title)}`)
    .limit(1)
    .executeTakeFirst();
  return row?.id;
}

/**
 * Import: one version as the document gives it. `withMetadata` is false on a database whose
 * migrations have not yet added label and restored_from (a rolling upgrade).
 */
export async function insertImportedVersion(
  trx: Trx,
  v: {
    id: string;
    noteId: string;
    version: number;
    title: string;
    content: string;
    createdAt: string;
    label: string | null;
    restoredFrom: number | null;
    /** The importing user: the versions become theirs. */
    authorId: string;
  },
  withMetadata: boolean,
): Promise<void> {
  await trx
    .insertInto('note_versions')
    .values({
      id: v.id,
      note_id: v.noteId,
      version: v.version,
      title: Buffer.from(v.title, 'utf8'),
      content: Buffer.from(v.content, 'utf8'),
      created_at: v.createdAt,
      author_id: v.authorId,
    })
    .execute();
  if (withMetadata && (v.label !== null || v.restoredFrom !== null)) {
    await sql`update note_versions set label = ${v.label}, restored_from = ${v.restoredFrom} where id = ${v.id}`.execute(
      trx,
    );
  }
}
