import { allAttachments } from '../attachments/attachments.repository.js';
import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Db } from '../db/schema.js';
import { Errors } from '../errors.js';
import { EXPORT_FORMAT, EXPORT_FORMAT_VERSION } from './export-format.js';
import * as repo from './export.repository.js';
import { folderTree } from '../folders/folders.service.js';

export { EXPORT_FORMAT, EXPORT_FORMAT_VERSION };

/** Notes read per query, and versions per query: memory stays bounded by one page whatever the account holds. */
const NOTES_PAGE = 100;
const VERSIONS_PAGE = 50;

/**
 * Every live note of the owner, oldest first, a page at a time. Between pages it waits for the
 * event loop's next turn: awaiting a query alone does not yield to other requests (on SQLite the
 * query runs synchronously and its promise is already settled), so a large account would otherwise
 * hold the process until its export is done.
 */
export async function* ownerNotes(db: Db, ownerId: string): AsyncGenerator<repo.NoteHead> {
  let after: repo.NoteHead | undefined;
  for (;;) {
    const page = await repo.notesPage(db, ownerId, after, NOTES_PAGE);
    yield* page;
    if (page.length < NOTES_PAGE) return;
    after = page.at(-1);
    await nextTurn();
  }
}

/** Work the export loops do between two turns of the event loop, in milliseconds. */
const TURN_BUDGET_MS = 5;

/**
 * Returns a function to await between steps of a long loop: it gives the event loop a turn once
 * TURN_BUDGET_MS of work has run since the last one, so other requests wait at most that long.
 */
export function turnTaker(): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < TURN_BUDGET_MS) return;
    await nextTurn();
    since = performance.now();
  };
}

/** One note's versions, oldest first; a long history yields between its pages like ownerNotes. */
async function* noteVersions(db: Db, noteId: string): AsyncGenerator<repo.VersionRecord> {
  let after = 0;
  for (;;) {
    const page = await repo.versionsPage(db, noteId, after, VERSIONS_PAGE);
    yield* page;
    if (page.length < VERSIONS_PAGE) return;
    after = page.at(-1)!.version;
    await nextTurn();
  }
}

/**
 * The export document, produced piece by piece as the client reads it (Readable.from pulls the
 * next piece only when the socket has drained), so its size never has to fit in memory. Versions
 * are oldest first, each with its metadata; the trash is left out. A failure part-way (a query)
 * destroys the stream with that error: the route logs it and the response is cut off, so a client
 * never mistakes a partial document for a whole one.
 */
export function exportDocument(db: Db, owner: { id: string; username: string }, now: Date): Readable {
  const { id: ownerId, username } = owner;
  async function* pieces(): AsyncGenerator<string> {
    // Every folder's path, parents before their children, so empty folders come back too. One at a
    // time with turns between: an old tree thousands of levels deep has paths of as many names.
    const tree = await folderTree(db, ownerId);
    const files = (await allAttachments(db, ownerId)).map(
      ({ id, filename, content_type, size, sha256, created_at }) => ({
        id,
        filename,
        content_type,
        size,
        sha256,
        created_at,
      }),
    );
    yield `{"format":"${EXPORT_FORMAT}","format_version":${EXPORT_FORMAT_VERSION},"exported_at":${JSON.stringify(now.toISOString())},` +
      `"username":${JSON.stringify(username)},"folders":[`;
    const takeTurn = turnTaker();
    let firstFolder = true;
    for (const { names } of tree.walk()) {
      await takeTurn();
      yield (firstFolder ? '' : ',') + JSON.stringify(names.join('/'));
      firstFolder = false;
    }
    yield `],"attachments":${JSON.stringify(files)},"notes":[`;
    let firstNote = true;
    for await (const note of ownerNotes(db, ownerId)) {
      await takeTurn();
      yield `${firstNote ? '\n' : ',\n'}{"id":${JSON.stringify(note.id)},"title":${JSON.stringify(note.title)},` +
        `"created_at":${JSON.stringify(note.created_at)},"updated_at":${JSON.stringify(note.updated_at)},` +
        `"folder":${JSON.stringify(note.folder_id === null ? null : (tree.pathOf(note.folder_id) ?? null))},` +
        `"pinned":${note.pinned},"archived":${note.archived},"versions":[`;
      firstNote = false;
      let firstVersion = true;
      for await (const v of noteVersions(db, note.id)) {
        yield (firstVersion ? '\n' : ',\n') +
          JSON.stringify({
            version: v.version,
            title: v.title,
            content: v.content,
            created_at: v.created_at,
            label: v.label,
            restored_from: v.restored_from,
          });
        firstVersion = false;
      }
      yield ']}';
    }
    yield '\n]}\n';
  }
  return Readable.from(batched(pieces()), { objectMode: false });
}

/** Bytes the JSON export gathers before it writes: one socket write per piece cost more than the pieces. */
const BATCH_BYTES = 64 * 1024;

/**
 * The pieces joined into chunks of about BATCH_BYTES (a larger piece, a version's content, goes
 * alone). The first piece goes at once: the response starts (status and headers) before any note is
 * read, so a later failure cuts off a started download rather than turning into an error answer.
 */
async function* batched(pieces: AsyncGenerator<string>): AsyncGenerator<string> {
  const first = await pieces.next();
  if (first.done === true) return;
  yield first.value;
  let batch = '';
  for await (const piece of pieces) {
    batch += piece;
    if (batch.length >= BATCH_BYTES) {
      yield batch;
      batch = '';
    }
  }
  if (batch !== '') yield batch;
}

/** The account being exported; 404 when it was deleted after its token was issued. */
export async function exportOwner(db: Db, ownerId: string): Promise<{ id: string; username: string }> {
  const username = await repo.usernameOf(db, ownerId);
  if (username === undefined) throw Errors.userNotFound();
  return { id: ownerId, username };
}
