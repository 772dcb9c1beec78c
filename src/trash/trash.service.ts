import { anyoneListening, inTransaction, noteChanged } from '../db/effects.js';
import type { Db } from '../db/schema.js';
import { audience, audiences } from '../members/access.repository.js';
import { Errors } from '../errors.js';
import type { Page } from '../shared/page.js';
import { getNote, type Note } from '../notes/notes.service.js';
import * as repo from '../notes/trash.repository.js';
import { restoreNoteTags } from '../tags/tags.repository.js';

export interface TrashEntry {
  id: string;
  title: string;
  deleted_at: string;
  purge_at: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** When the purge job may delete a note trashed at `deletedAt`, under today's TRASH_DAYS. */
export function purgeTime(deletedAt: string, trashDays: number): string {
  return new Date(Date.parse(deletedAt) + trashDays * DAY_MS).toISOString();
}

export async function listTrash(db: Db, ownerId: string, page: Page, trashDays: number): Promise<TrashEntry[]> {
  const rows = await repo.listTrash(db, ownerId, page);
  return rows.map((row) => {
    const deletedAt = row.deleted_at!;
    return { id: row.id, title: row.title, deleted_at: deletedAt, purge_at: purgeTime(deletedAt, trashDays) };
  });
}

/** Puts the note back where it was: same id, versions, times; it reappears in lists and search. */
export async function restoreFromTrash(db: Db, ownerId: string, noteId: string): Promise<Note> {
  await inTransaction(db, async (trx) => {
    if (!(await repo.restoreNote(trx, ownerId, noteId))) throw Errors.noteNotFound();
    await restoreNoteTags(trx, ownerId, noteId);
    noteChanged(trx, { type: 'note.restored', noteId });
  });
  return getNote(db, ownerId, noteId);
}

export async function deleteFromTrash(db: Db, ownerId: string, noteId: string): Promise<void> {
  await inTransaction(db, async (trx) => {
    // The note and its members are gone after: who to tell is read first.
    const users = anyoneListening(trx) ? await audience(trx, noteId) : [];
    if (!(await repo.purgeNote(trx, ownerId, noteId))) throw Errors.noteNotFound();
    noteChanged(trx, { type: 'note.deleted', noteId, users });
  });
}

/**
 * "Empty trash": deletes every note of the owner's trash for good, a batch per transaction (as the
 * purge job does). Returns how many went.
 */
export async function emptyTrash(db: Db, ownerId: string): Promise<number> {
  let deleted = 0;
  for (;;) {
    const rows = await repo.listTrash(db, ownerId, { limit: PURGE_BATCH, offset: 0 });
    deleted += await inTransaction(db, async (trx) => {
      let n = 0;
      for (const { id } of rows) {
        const users = anyoneListening(trx) ? await audience(trx, id) : [];
        if (!(await repo.purgeNote(trx, ownerId, id))) continue;
        noteChanged(trx, { type: 'note.deleted', noteId: id, users });
        n += 1;
      }
      return n;
    });
    if (rows.length < PURGE_BATCH) return deleted;
  }
}

/** Notes deleted per transaction: short write transactions keep SQLite's single writer lock brief. */
const PURGE_BATCH = 200;

/**
 * The periodic purge: deletes every note that has been in the trash for TRASH_DAYS days or more
 * (all of them when TRASH_DAYS is 0). Plain function of the database, the time and the setting,
 * so the job runner, the CLI and the tests call the same thing.
 */
export async function purgeTrash(db: Db, now: Date, config: { trashDays: number }): Promise<{ notes: number }> {
  const cutoff = new Date(now.getTime() - config.trashDays * DAY_MS).toISOString();
  let notes = 0;
  for (;;) {
    const ids = await repo.expiredIds(db, cutoff, PURGE_BATCH);
    notes += await inTransaction(db, async (trx) => {
      const told = anyoneListening(trx) ? await audiences(trx, ids) : new Map<string, string[]>();
      const deleted = await repo.deleteTrashed(trx, ids, cutoff);
      for (const noteId of deleted) noteChanged(trx, { type: 'note.deleted', noteId, users: told.get(noteId) ?? [] });
      return deleted.length;
    });
    if (ids.length < PURGE_BATCH) return { notes };
  }
}
