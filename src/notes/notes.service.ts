import { linkedAttachments, linkedByNote, recordReferences } from '../attachments/references.js';
import { anyoneListening, inTransaction, noteChanged } from '../db/effects.js';
import { inWriteTransaction, writeWith } from '../db/group-commit.js';
import type { Db } from '../db/schema.js';
import { isForeignKeyViolation, nowIso } from '../db/values.js';
import { Errors } from '../errors.js';
import type { Page } from '../shared/page.js';
import { newId } from '../shared/ids.js';
import { indexVersion, searchVector } from '../search/search.index.js';
import { decodeTags, encodeTags, extractTags, normalizeTag, searchableTags } from '../tags/extract.js';
import { insertNoteTags, removeNoteTags, replaceNoteTags } from '../tags/tags.repository.js';
import { requireFolder } from '../folders/folders.service.js';
import { audience } from '../members/access.repository.js';
import * as repo from './notes.repository.js';
import { previewsOf } from './preview.js';
import * as onePostgresCall from './save.postgres.js';
import { CONTENT_MAX_BYTES } from './notes.schemas.js';
import { VERSION_MAX } from './version-rules.js';

export interface Note {
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
  tags: string[];
}

/** A list row: the note without its content and version. */
export type NoteRow = Pick<
  Note,
  'id' | 'owner_id' | 'title' | 'updated_at' | 'folder_id' | 'pinned' | 'archived' | 'tags'
> & { preview: string };

export const PLACEHOLDER_TITLE = 'Untitled';

/**
 * Content within 1 MiB of UTF-8: a size, so 413, and in bytes, which JSON Schema cannot count.
 * (That title and content are well-formed Unicode is the route schema's rule.)
 */
export function checkText(content: string): void {
  if (Buffer.byteLength(content, 'utf8') > CONTENT_MAX_BYTES) {
    throw Errors.contentTooLarge(`content must be at most ${CONTENT_MAX_BYTES} bytes (1 MiB) of UTF-8`);
  }
}

export async function createNote(
  db: Db,
  ownerId: string,
  input: { title?: string; content?: string; folder_id?: string | null },
): Promise<Note> {
  const title = input.title ?? PLACEHOLDER_TITLE;
  const content = input.content ?? '';
  checkText(content);
  const folderId = input.folder_id ?? null;
  const tags = extractTags(content);
  const links = linkedAttachments(content);
  const id = newId();
  const versionId = newId();
  const now = nowIso();
  try {
    const created = await writeWith(
      db,
      {
        postgres: (one) =>
          onePostgresCall.createNote(one, {
            id,
            ownerId,
            versionId,
            title,
            content,
            now,
            folderId,
            tags: encodeTags(tags),
            tagRows: searchableTags(tags),
            links,
            tsvector: searchVector(title, content),
          }),
        sqlite: async (trx) => {
          if (folderId !== null) await requireFolder(trx, ownerId, folderId);
          await repo.insertNote(trx, {
            id,
            owner_id: ownerId,
            title,
            version_id: versionId,
            now,
            folder_id: folderId,
            tags: encodeTags(tags),
          });
          await insertNoteTags(trx, { noteId: id, ownerId, tags });
          await repo.insertVersion(trx, {
            id: versionId,
            note_id: id,
            version: 1,
            title,
            content,
            created_at: now,
            author_id: ownerId,
          });
          await recordReferences(trx, ownerId, versionId, links);
          await indexVersion(trx, { ownerId, noteId: id, versionId, version: 1, title, content });
          return true;
        },
      },
      content.length,
    );
    if (!created) throw Errors.folderNotFound();
    noteChanged(db, { type: 'note.created', noteId: id });
  } catch (error) {
    // The account was deleted, or (with a folder) the folder was deleted after it was found.
    if (isForeignKeyViolation(error)) throw folderId === null ? Errors.userNotFound() : Errors.folderNotFound();
    throw error;
  }
  return {
    id,
    owner_id: ownerId,
    title,
    content,
    version: 1,
    version_id: versionId,
    created_at: now,
    updated_at: now,
    folder_id: folderId,
    pinned: false,
    archived: false,
    tags,
  };
}

export async function getNote(db: Db, ownerId: string, noteId: string): Promise<Note> {
  const record = await repo.findNote(db, ownerId, noteId);
  if (record === undefined) throw Errors.noteNotFound();
  return { ...record, tags: decodeTags(record.tags) };
}

/** GET /notes's filters as the route gives them: `folder` is an id or `root`, `tag` may start with `#`. */
export interface ListFilter {
  folder?: string | undefined;
  tag?: string | undefined;
  pinned?: boolean | undefined;
  archived?: boolean | undefined;
}

/** A page of the caller's notes and how many there are in all (X-Total-Count). */
export async function listNotes(
  db: Db,
  ownerId: string,
  filter: ListFilter,
  page: Page | undefined,
): Promise<{ rows: NoteRow[]; total: number }> {
  const folder = filter.folder === undefined ? undefined : filter.folder === 'root' ? null : filter.folder;
  if (folder != null) await requireFolder(db, ownerId, folder);
  const where: repo.NoteFilter = {
    archived: filter.archived ?? false,
    ...(folder !== undefined && { folder }),
    ...(filter.tag !== undefined && { tag: normalizeTag(filter.tag) }),
    ...(filter.pinned !== undefined && { pinned: filter.pinned }),
  };
  const listed = await repo.listNotes(db, ownerId, where, page);
  const previews = await previewsOf(db, listed);
  const rows = listed.map(({ version_id: _, ...row }, i) => ({
    ...row,
    tags: decodeTags(row.tags),
    preview: previews[i]!,
  }));
  // A short page is the last one, so it tells the total itself; only a full page (or an empty
  // one past the end) needs the count.
  const last = page === undefined || (rows.length < page.limit && (rows.length > 0 || page.offset === 0));
  const total = last ? (page?.offset ?? 0) + rows.length : await repo.countNotes(db, ownerId, where);
  return { rows, total };
}

/**
 * PATCH /notes/{id}: files the note — folder, pin, archive — without a new version or update time.
 * A folder that is not the caller's is 404 like a missing one.
 */
export async function fileNote(
  db: Db,
  ownerId: string,
  noteId: string,
  change: { folder_id?: string | null; pinned?: boolean; archived?: boolean },
): Promise<Note> {
  try {
    await inWriteTransaction(db, async (trx) => {
      if (change.folder_id != null) await requireFolder(trx, ownerId, change.folder_id);
      if (!(await repo.fileNote(trx, ownerId, noteId, change))) throw Errors.noteNotFound();
      noteChanged(trx, { type: 'note.filed', noteId });
    });
  } catch (error) {
    if (isForeignKeyViolation(error)) throw Errors.folderNotFound(); // deleted after it was found
    throw error;
  }
  return getNote(db, ownerId, noteId);
}

/** DELETE /notes/{id}: into the trash, or gone at once when the trash keeps nothing (TRASH_DAYS=0). */
export async function deleteNote(db: Db, ownerId: string, noteId: string, trashDays: number): Promise<void> {
  const done =
    trashDays === 0
      ? await inWriteTransaction(db, async (trx) => {
          // The note and its members are gone after: who to tell is read first.
          const users = anyoneListening(trx) ? await audience(trx, noteId) : [];
          const deleted = await repo.deleteNote(trx, ownerId, noteId);
          if (deleted) noteChanged(trx, { type: 'note.deleted', noteId, users });
          return deleted;
        })
      : await inWriteTransaction(db, async (trx) => {
          const trashed = await repo.trashNote(trx, ownerId, noteId, nowIso());
          if (trashed) await removeNoteTags(trx, [noteId]);
          if (trashed) noteChanged(trx, { type: 'note.trashed', noteId });
          return trashed;
        });
  if (!done) throw Errors.noteNotFound();
}

/**
 * Adds the next version. `expected` comes from If-Match: when given, the write only happens if the
 * note is still at one of those versions, else 412 tells the client the current one. A note at
 * VERSION_MAX takes no more versions: 409 `version_limit`, whatever If-Match says.
 */
export async function addVersion(
  db: Db,
  ownerId: string,
  noteId: string,
  input: { title: string; content: string },
  expected: number[] | undefined,
  authorId = ownerId,
  /** Tests only: pauses at `notes:save-missed` (see writeVersion). */
  checkpoint?: (step: string) => Promise<void>,
): Promise<number> {
  checkText(input.content);
  return (await writeVersion(db, ownerId, noteId, input, expected, null, authorId, undefined, false, checkpoint))
    .version;
}

/**
 * Adds a version (an edit, or a restore when `restoredFrom` is set) and says which it is.
 * `authorId` is who writes it: the owner, or an editor the note is shared with.
 */
export async function writeVersion(
  db: Db,
  ownerId: string,
  noteId: string,
  input: { title: string; content: string },
  expected: number[] | undefined,
  restoredFrom: number | null,
  authorId = ownerId,
  /** Everyone who wrote it, in order, when several did (a live session's version, src/collab); the first is `authorId`. */
  authors?: readonly string[],
  /** Written from a live co-editing session (src/collab): told as such, so it is not applied back to it. */
  live = false,
  /**
   * Tests only: pauses at `notes:version-authors`, once the version is saved and before its several
   * authors are; at `notes:save-write`, before the write; at `notes:save-missed`, once a save
   * wrote nothing and before it says why.
   */
  checkpoint?: (step: string) => Promise<void>,
): Promise<{ version: number; versionId: string; updatedAt: string }> {
  const coauthors = authors !== undefined && authors.length > 1 ? authors : undefined;
  const versionId = newId();
  const now = nowIso();
  const title = input.title;
  // Derived before the transaction: a large note's scan does not hold the write lock.
  const tags = extractTags(input.content);
  const encoded = encodeTags(tags);
  // Someone else's version of the owner's note links only the owner's attachments the note already
  // links to: a link records the file as part of the note, readable by its members and through its
  // share link, and the owner's other files are theirs alone, whatever ids an editor learned.
  const byOwner = authorId === ownerId || coauthors?.includes(ownerId) === true;
  const found = linkedAttachments(input.content);
  const links = byOwner ? found : await linkedByNote(db, noteId, found);
  const savePostgres = (one: Db) =>
    onePostgresCall.saveVersion(one, {
      ownerId,
      noteId,
      versionId,
      title,
      content: input.content,
      now,
      expected,
      restoredFrom,
      authorId,
      tags: encoded,
      tagRows: searchableTags(tags),
      links,
      tsvector: searchVector(title, input.content),
    });
  /** The several authors of the version just saved (if it was), in the same transaction, before anyone is told. */
  const addAuthors = async <T>(trx: Db, saved: T | undefined): Promise<T | undefined> => {
    if (saved === undefined || coauthors === undefined) return saved;
    await checkpoint?.('notes:version-authors');
    await repo.insertVersionAuthors(trx, versionId, coauthors);
    return saved;
  };
  await checkpoint?.('notes:save-write');
  const next = await writeWith(
    db,
    {
      // A version written by several commits with its authors: its save function and their rows in
      // one transaction (two round trips more, for a live session's versions only). Committed one
      // after the other, a reader between the two saw the version with its first author alone, and
      // a process stopped there lost the others for good.
      postgres: (one) =>
        coauthors === undefined
          ? savePostgres(one)
          : inTransaction(one, async (trx) => addAuthors(trx, await savePostgres(trx))),
      sqlite: async (trx) => {
        const advanced = await repo.advanceVersion(trx, { ownerId, noteId, versionId, title, now, expected });
        if (advanced === undefined) return undefined;
        await repo.insertVersion(trx, {
          id: versionId,
          note_id: noteId,
          version: advanced.version,
          title,
          content: input.content,
          created_at: advanced.updated_at,
          restored_from: restoredFrom,
          author_id: authorId,
        });
        await recordReferences(trx, ownerId, versionId, links);
        await indexVersion(trx, {
          ownerId,
          noteId,
          versionId,
          version: advanced.version,
          title: input.title,
          content: input.content,
        });
        // Most saves leave the tags as they were: then nothing more is written.
        if (encoded !== advanced.tags) {
          await repo.setNoteTags(trx, noteId, encoded);
          await replaceNoteTags(trx, { noteId, ownerId, tags });
        }
        return addAuthors(trx, advanced);
      },
    },
    input.content.length,
  );
  if (next !== undefined) {
    noteChanged(db, { type: 'note.updated', noteId, version: next.version, authorId, ...(live && { live }) });
    return { version: next.version, versionId, updatedAt: next.updated_at };
  }
  await checkpoint?.('notes:save-missed');
  const current = await repo.findNoteVersionNumber(db, ownerId, noteId);
  if (current !== undefined && current >= VERSION_MAX) throw Errors.versionLimit();
  // A save that named no version can only have missed the note: in the trash, or deleted, when it
  // was written, though it may be back by now (then a 412 would tell of a version it never named).
  if (current === undefined || expected === undefined) throw Errors.noteNotFound();
  throw Errors.versionMismatch(current);
}

export async function listVersions(db: Db, ownerId: string, noteId: string, page: Page) {
  const shape = await repo.findNoteHistoryShape(db, ownerId, noteId);
  if (shape === undefined) throw Errors.noteNotFound();
  if (page.offset >= shape.version - shape.pruned) return [];
  return withAuthors(db, await repo.listVersions(db, noteId, shape, page.limit, page.offset));
}

/** Each version with `authors`: its several writers (a live session's version), else its author alone. */
export async function withAuthors<T extends { id: string; author_username: string | null }>(
  db: Db,
  rows: T[],
): Promise<(T & { authors: string[] })[]> {
  const several = await repo.versionAuthors(
    db,
    rows.map((row) => row.id),
  );
  return rows.map((row) => ({
    ...row,
    authors: several.get(row.id) ?? (row.author_username === null ? [] : [row.author_username]),
  }));
}

export async function getVersion(db: Db, ownerId: string, noteId: string, versionId: string) {
  const row = await repo.findVersion(db, ownerId, noteId, versionId);
  if (row === undefined) {
    const noteExists = (await repo.findNoteVersionNumber(db, ownerId, noteId)) !== undefined;
    throw noteExists ? Errors.versionNotFound() : Errors.noteNotFound();
  }
  return (await withAuthors(db, [row]))[0]!;
}
