import type { Db } from '../db/schema.js';
import { Errors } from '../errors.js';
import type { DiffRunner } from './diff-runner.js';
import { normalizeId } from '../shared/ids.js';
import * as repo from './notes.repository.js';
import { getNote, writeVersion, type Note } from './notes.service.js';
import { LABEL_RULE, parseLabel } from './version-rules.js';

export const CONTEXT_MAX = 20;

/** A 404 that says which is missing: the note (or it is someone else's), or just the version. */
async function versionNotFound(db: Db, ownerId: string, noteId: string): Promise<never> {
  const exists = (await repo.findNoteVersionNumber(db, ownerId, noteId)) !== undefined;
  throw exists ? Errors.versionNotFound() : Errors.noteNotFound();
}

/** A label as PATCH sets it: the rule import applies too (version-rules.ts); null removes it. */
export function normalizeLabel(label: string | null): string | null {
  if (label === null) return null;
  const value = parseLabel(label);
  if (value === undefined) throw Errors.validation(`Invalid request body: label ${LABEL_RULE}`);
  return value;
}

export async function labelVersion(db: Db, ownerId: string, noteId: string, versionId: string, label: string | null) {
  const value = normalizeLabel(label);
  if (!(await repo.setLabel(db, ownerId, noteId, versionId, value))) return versionNotFound(db, ownerId, noteId);
  const row = await repo.findVersion(db, ownerId, noteId, versionId);
  // Pruned or its note deleted between the two statements.
  if (row === undefined) return versionNotFound(db, ownerId, noteId);
  return row;
}

/** POST /notes/{id}/restore: a new version with the chosen one's title and content. */
export async function restoreVersion(
  db: Db, ownerId: string, noteId: string, which: { version?: number | undefined; version_id?: string | undefined },
  expected: number[] | undefined,
): Promise<Note> {
  if ((which.version === undefined) === (which.version_id === undefined)) {
    throw Errors.validation('Invalid request body: give exactly one of "version" and "version_id"');
  }
  const source = which.version !== undefined
    ? await repo.findVersionByNumber(db, ownerId, noteId, which.version)
    // Ids in the body are normalised like ids in the path (an upper-case UUID names the same version).
    : await repo.findVersion(db, ownerId, noteId, normalizeId(which.version_id!));
  if (source === undefined) return versionNotFound(db, ownerId, noteId);
  const written = await writeVersion(db, ownerId, noteId, source, expected, source.version);
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
  };
}

export interface DiffQuery {
  from: number | undefined;
  to: number | undefined;
  context: number;
}

function parseVersionNumber(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^[1-9]\d{0,15}$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw Errors.invalidQuery(`Query parameter "${name}" must be a version number (an integer 1 or more)`);
  }
  return Number(raw);
}

export function parseDiffQuery(query: { from?: string | undefined; to?: string | undefined; context?: string | undefined }): DiffQuery {
  let context = 3;
  if (query.context !== undefined) {
    if (!/^\d{1,2}$/.test(query.context) || Number(query.context) > CONTEXT_MAX) {
      throw Errors.invalidQuery(`Query parameter "context" must be an integer from 0 to ${CONTEXT_MAX}`);
    }
    context = Number(query.context);
  }
  return { from: parseVersionNumber('from', query.from), to: parseVersionNumber('to', query.to), context };
}

const side = (v: repo.VersionRecord) => ({ version: v.version, version_id: v.id, created_at: v.created_at });

/**
 * GET /notes/{id}/diff, answered as UTF-8 JSON: the diff's lines are serialised and encoded where
 * they are computed (on the diff worker for large versions), never walked again on the event loop.
 */
export async function diffVersions(db: Db, runner: DiffRunner, ownerId: string, noteId: string, query: DiffQuery): Promise<Buffer> {
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
  const diff = await runner.run(from?.content ?? '', to.content, query.context, `--- ${fromLabel}\n+++ v${to.version}\n`);
  const head = JSON.stringify({
    note_id: noteId,
    from: from === undefined ? null : side(from),
    to: side(to),
    title: { from: from?.title ?? null, to: to.title, changed: (from?.title ?? null) !== to.title },
  });
  // Both are JSON objects: splice the diff's members into the head's (one copy of the bytes).
  return Buffer.concat([Buffer.from(`${head.slice(0, -1)},`), diff.subarray(1)]);
}
