import { inWriteTransaction } from '../db/group-commit.js';
import type { Db } from '../db/schema.js';
import { Errors } from '../errors.js';
import type { DiffRunner } from './diff-runner.js';
import { normalizeId } from '../shared/ids.js';
import * as repo from './notes.repository.js';
import { getNote, withAuthors, writeVersion, type Note } from './notes.service.js';
import { extractTags } from '../tags/extract.js';

/** A 404 that says which is missing: the note (or it is someone else's), or just the version. */
async function versionNotFound(db: Db, ownerId: string, noteId: string): Promise<never> {
  const exists = (await repo.findNoteVersionNumber(db, ownerId, noteId)) !== undefined;
  throw exists ? Errors.versionNotFound() : Errors.noteNotFound();
}

/** `label`: valid by the route schema (LABEL_PATTERN); stored trimmed, null removes it. */
export async function labelVersion(db: Db, ownerId: string, noteId: string, versionId: string, label: string | null) {
  const value = label === null ? null : label.trim();
  const labelled = await inWriteTransaction(db, (trx) => repo.setLabel(trx, ownerId, noteId, versionId, value));
  if (!labelled) return versionNotFound(db, ownerId, noteId);
  const row = await repo.findVersion(db, ownerId, noteId, versionId);
  // Pruned or its note deleted between the two statements.
  if (row === undefined) return versionNotFound(db, ownerId, noteId);
  return (await withAuthors(db, [row]))[0]!;
}

/** POST /notes/{id}/restore: a new version with the chosen one's title and content. */
export async function restoreVersion(
  db: Db,
  ownerId: string,
  noteId: string,
  which: { version: number } | { version_id: string },
  expected: number[] | undefined,
  authorId = ownerId,
): Promise<Note> {
  const source =
    'version' in which
      ? await repo.findVersionByNumber(db, ownerId, noteId, which.version)
      : // Ids in the body are normalised like ids in the path (an upper-case UUID names the same version).
        await repo.findVersion(db, ownerId, noteId, normalizeId(which.version_id));
  if (source === undefined) return versionNotFound(db, ownerId, noteId);
  const written = await writeVersion(db, ownerId, noteId, source, expected, source.version, authorId);
  const note = await getNote(db, ownerId, noteId).catch(() => undefined);
  return {
    id: noteId,
    owner_id: ownerId,
    title: source.title,
    content: source.content,
    version: written.version,
    version_id: written.versionId,
    created_at: note?.created_at ?? written.updatedAt,
    updated_at: written.updatedAt,
    folder_id: note?.folder_id ?? null,
    pinned: note?.pinned ?? false,
    archived: note?.archived ?? false,
    tags: extractTags(source.content),
  };
}

/** GET /notes/{id}/diff's query, validated by its schema (DiffQuery), context defaulted. */
export interface DiffQuery {
  from?: number | undefined;
  to?: number | undefined;
  context: number;
}

const side = (v: repo.VersionRecord) => ({ version: v.version, version_id: v.id, created_at: v.created_at });

/**
 * GET /notes/{id}/diff, answered as UTF-8 JSON: the diff's lines are serialised and encoded where
 * they are computed (on the diff worker for large versions), never walked again on the event loop.
 */
export async function diffVersions(
  db: Db,
  runner: DiffRunner,
  ownerId: string,
  noteId: string,
  query: DiffQuery,
): Promise<Buffer> {
  const current = await repo.findNoteVersionNumber(db, ownerId, noteId);
  if (current === undefined) throw Errors.noteNotFound();
  const toNumber = query.to ?? current;
  const to = await repo.findVersionByNumber(db, ownerId, noteId, toNumber);
  if (to === undefined) return versionNotFound(db, ownerId, noteId);
  let from: repo.VersionRecord | undefined;
  if (query.from !== undefined) {
    from = await repo.findVersionByNumber(db, ownerId, noteId, query.from);
    if (from === undefined) return versionNotFound(db, ownerId, noteId);
  } else {
    const previous = await repo.previousVersionNumber(db, noteId, to.version);
    if (previous !== undefined) from = await repo.findVersionByNumber(db, ownerId, noteId, previous);
  }
  const fromLabel = from === undefined ? '/dev/null' : `v${from.version}`;
  const diff = await runner.run(
    from?.content ?? '',
    to.content,
    query.context,
    `--- ${fromLabel}\n+++ v${to.version}\n`,
  );
  const head = JSON.stringify({
    note_id: noteId,
    from: from === undefined ? null : side(from),
    to: side(to),
    title: { from: from?.title ?? null, to: to.title, changed: (from?.title ?? null) !== to.title },
  });
  // Both are JSON objects: splice the diff's members into the head's (one copy of the bytes).
  return Buffer.concat([Buffer.from(`${head.slice(0, -1)},`), diff.subarray(1)]);
}
