import { Readable } from 'node:stream';
import type { Db } from '../db/schema.js';
import { Errors } from '../errors.js';
import { EXPORT_FORMAT, EXPORT_FORMAT_VERSION } from './export-format.js';
import * as repo from './export.repository.js';

export { EXPORT_FORMAT, EXPORT_FORMAT_VERSION };

/** Notes read per query, and versions per query: memory stays bounded by one page whatever the account holds. */
const NOTES_PAGE = 100;
const VERSIONS_PAGE = 50;

/** Every live note of the owner, oldest first, a page at a time. */
export async function* ownerNotes(db: Db, ownerId: string): AsyncGenerator<repo.NoteHead> {
  let after: repo.NoteHead | undefined;
  for (;;) {
    const page = await repo.notesPage(db, ownerId, after, NOTES_PAGE);
    yield* page;
    if (page.length < NOTES_PAGE) return;
    after = page.at(-1);
  }
}

async function* noteVersions(db: Db, noteId: string): AsyncGenerator<repo.VersionRecord> {
  let after = 0;
  for (;;) {
    const page = await repo.versionsPage(db, noteId, after, VERSIONS_PAGE);
    yield* page;
    if (page.length < VERSIONS_PAGE) return;
    after = page.at(-1)!.version;
  }
}

/**
 * The export document, produced piece by piece as the client reads it (Readable.from pulls the
 * next piece only when the socket has drained), so its size never has to fit in memory. Versions
 * are oldest first, each with its metadata; the trash is left out.
 */
export function exportDocument(db: Db, owner: { id: string; username: string }, now: Date): Readable {
  const { id: ownerId, username } = owner;
  async function* pieces(): AsyncGenerator<string> {
    yield `{"format":"${EXPORT_FORMAT}","format_version":${EXPORT_FORMAT_VERSION},"exported_at":${JSON.stringify(now.toISOString())},`
      + `"username":${JSON.stringify(username)},"notes":[`;
    let firstNote = true;
    for await (const note of ownerNotes(db, ownerId)) {
      yield `${firstNote ? '\n' : ',\n'}{"id":${JSON.stringify(note.id)},"title":${JSON.stringify(note.title)},`
        + `"created_at":${JSON.stringify(note.created_at)},"updated_at":${JSON.stringify(note.updated_at)},"versions":[`;
      firstNote = false;
      let firstVersion = true;
      for await (const v of noteVersions(db, note.id)) {
        yield (firstVersion ? '\n' : ',\n') + JSON.stringify({
          version: v.version, title: v.title, content: v.content, created_at: v.created_at, label: v.label, restored_from: v.restored_from,
        });
        firstVersion = false;
      }
      yield ']}';
    }
    yield '\n]}\n';
  }
  return Readable.from(pieces(), { objectMode: false });
}

/** The account being exported; 404 when it was deleted after its token was issued. */
export async function exportOwner(db: Db, ownerId: string): Promise<{ id: string; username: string }> {
  const username = await repo.usernameOf(db, ownerId);
  if (username === undefined) throw Errors.userNotFound();
  return { id: ownerId, username };
}
