import { randomBytes } from 'node:crypto';
import { noteChanged } from '../db/effects.js';
import type { Db } from '../db/schema.js';
import { nowIso } from '../db/values.js';
import { Errors } from '../errors.js';
import * as notes from '../notes/notes.repository.js';
import { newId } from '../shared/ids.js';
import { extractTags } from '../tags/extract.js';
import * as repo from './shares.repository.js';

export interface Share {
  id: string;
  token: string;
  url: string;
  note_id: string;
  version: number | null;
  expires_at: string | null;
  created_at: string;
  views: number;
}

const toShare = (publicUrl: string, row: Omit<Share, 'url'>): Share => ({
  ...row,
  url: `${publicUrl}/s/${row.token}`,
  views: Number(row.views),
});

/** A link to the note: its current version, or `version` for good; optionally until `expiresAt`. */
export async function createShare(
  db: Db,
  publicUrl: string,
  ownerId: string,
  noteId: string,
  input: { version?: number | null; expires_at?: string | null },
): Promise<Share> {
  const note = await notes.findNoteVersionNumber(db, ownerId, noteId);
  if (note === undefined) throw Errors.noteNotFound();
  const version = input.version ?? null;
  if (version !== null && (await notes.findVersionByNumber(db, ownerId, noteId, version)) === undefined)
    throw Errors.versionNotFound();
  const expiresAt =
    input.expires_at === undefined || input.expires_at === null ? null : new Date(input.expires_at).toISOString();
  const now = nowIso();
  if (expiresAt !== null && expiresAt <= now) throw Errors.validation('expires_at must be in the future');
  // 192 random bits, URL-safe.
  const row = {
    id: newId(),
    note_id: noteId,
    owner_id: ownerId,
    token: randomBytes(24).toString('base64url'),
    version,
    expires_at: expiresAt,
    created_at: now,
  };
  await repo.insertShare(db, row);
  noteChanged(db, { type: 'share.changed', noteId });
  return toShare(publicUrl, { ...row, views: 0 });
}

export async function listShares(db: Db, publicUrl: string, ownerId: string, noteId: string): Promise<Share[]> {
  if ((await notes.findNoteVersionNumber(db, ownerId, noteId)) === undefined) throw Errors.noteNotFound();
  return (await repo.listShares(db, ownerId, noteId)).map((row) => toShare(publicUrl, row));
}

export async function revokeShare(db: Db, ownerId: string, noteId: string, id: string): Promise<void> {
  if (!(await repo.deleteShare(db, ownerId, noteId, id))) {
    if ((await notes.findNoteVersionNumber(db, ownerId, noteId)) === undefined) throw Errors.noteNotFound();
    throw Errors.shareNotFound();
  }
  noteChanged(db, { type: 'share.changed', noteId });
}

/** Tokens are base64url; anything else cannot be one and is a miss without a look-up (PostgreSQL refuses NUL in text). */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{1,200}$/;

function findShown(db: Db, token: string) {
  return TOKEN_SHAPE.test(token) ? repo.findShown(db, token, nowIso()) : Promise.resolve(undefined);
}

/** What a link shows, counting the view; every kind of miss is the same 404. */
export async function readShared(db: Db, token: string) {
  const shown = await findShown(db, token);
  if (shown === undefined) throw Errors.shareNotFound();
  await repo.countView(db, shown.share_id);
  return {
    title: shown.title,
    content: shown.content,
    version: shown.version,
    updated_at: shown.created_at,
    tags: extractTags(shown.content),
    pinned: shown.pinned !== null,
    outdated: shown.version < shown.current,
  };
}

/** An attachment of a shared note, only if the version the link shows links to it. */
export async function sharedAttachment(db: Db, token: string, attachmentId: string) {
  const shown = await findShown(db, token);
  if (shown === undefined || !(await repo.versionLinks(db, shown.version_id, attachmentId)))
    throw Errors.shareNotFound();
  return { ownerId: shown.owner_id };
}
