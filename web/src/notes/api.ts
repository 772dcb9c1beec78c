import { api, session, unwrap, type Folder, type Note } from '../api/client';
import { asYouType } from './search-query';
import type { components, paths } from '../api/schema';

export type { Folder, Note, NoteRow, SearchResult, TagCount } from '../api/client';
/** A row of "Shared with me": whose note it is and what the caller may do with it. */
export type SharedNoteRow = components['schemas']['SharedNoteRow'];
export type NoteListQuery = NonNullable<paths['/api/notes']['get']['parameters']['query']>;
export type SearchQuery = NonNullable<paths['/api/notes/search']['get']['parameters']['query']>;
/** Where a note is filed: what PATCH /api/notes/{id} changes without making a version. */
export type Filing = Pick<Note, 'folder_id' | 'pinned' | 'archived'>;

export async function getNote(noteId: string, signal?: AbortSignal): Promise<Note> {
  return unwrap(await api.GET('/api/notes/{noteID}', { params: { path: { noteID: noteId } }, signal }));
}

/** The caller's role on someone else's note (a member not listed reads it: viewer). */
export async function memberRole(noteId: string, userId: string): Promise<'viewer' | 'editor'> {
  const members = unwrap(await api.GET('/api/notes/{noteID}/members', { params: { path: { noteID: noteId } } }));
  return members.find((m) => m.user_id === userId)?.role ?? 'viewer';
}

/** The first save of a new note creates it. */
export async function createNote(body: { title: string; content: string; folder_id: string | null }): Promise<Note> {
  return unwrap(await api.POST('/api/notes', { body }));
}

/** One place both sides changed (409 `merge_conflict`, docs/api.md "Merging saves"). */
export type MergeConflict = NonNullable<
  paths['/api/notes/{noteID}/versions']['post']['responses'][409]['content']['application/problem+json']['conflicts']
>[number];

/** How a save ended: saved as is, saved merged with changes made elsewhere, or refused. */
export type SaveAnswer =
  | { saved: number }
  | { saved: number; merged: Note }
  /** Overlapping changes: nothing was saved. */
  | { conflicts: MergeConflict[]; current: number }
  /** The note moved on twice while the merge ran (412): nothing was saved. */
  | 'conflict';

/**
 * A new version, conditional on the version the text was written on (If-Match), and always asking
 * the server to merge (`?merge=true`, CONTRACT "Many hands and devices"): when the note moved on
 * meanwhile, changes that do not overlap are saved together (201, `merged`), overlapping ones are
 * answered with where they overlap (409 `merge_conflict`), and nothing is ever overwritten.
 */
export async function saveVersion(
  noteId: string,
  baseVersion: number,
  text: { title: string; content: string },
): Promise<SaveAnswer> {
  const answer = await api.POST('/api/notes/{noteID}/versions', {
    params: { path: { noteID: noteId }, header: { 'if-match': `"${baseVersion}"` }, query: { merge: 'true' } },
    body: text,
  });
  const { status } = answer.response;
  if (status === 412) return 'conflict';
  if (status === 409) {
    const problem = answer.error as { code?: string; conflicts?: MergeConflict[]; current_version?: number };
    if (problem?.code === 'merge_conflict' && problem.conflicts && problem.current_version !== undefined)
      return { conflicts: problem.conflicts, current: problem.current_version };
  }
  const etag = answer.response.headers.get('etag');
  const data = unwrap(answer);
  const saved = Number(/"(\d+)"/.exec(etag ?? '')?.[1] ?? baseVersion + 1);
  if (status === 201 && data !== null && typeof data === 'object' && 'merged' in data) {
    const { merged: _, ...note } = data;
    return { saved, merged: note };
  }
  return { saved };
}

/**
 * The title and text of version `version` (a conflict's base). `known`, when it is that version's
 * (the editor holds the version it started from), saves the requests; a version no longer kept
 * (retention) gives the empty text, which makes the merge coarser, never lossy.
 */
export async function versionText(
  noteId: string,
  version: number,
  known: { version: number; title: string; content: string; version_id: string },
): Promise<{ title: string; content: string }> {
  if (known.version === version && known.version_id !== '') {
    const listed = unwrap(
      await api.GET('/api/notes/{noteID}/{versionID}', {
        params: { path: { noteID: noteId, versionID: known.version_id } },
      }),
    ).version;
    if (listed === version) return { title: known.title, content: known.content };
  }
  const rows = unwrap(
    await api.GET('/api/notes/{noteID}/versions', { params: { path: { noteID: noteId }, query: { limit: 100 } } }),
  );
  const row = rows.find((r) => r.version === version);
  if (row === undefined) return { title: '', content: '' };
  const found = unwrap(
    await api.GET('/api/notes/{noteID}/{versionID}', { params: { path: { noteID: noteId, versionID: row.id } } }),
  );
  return { title: found.title, content: found.content };
}

/**
 * The access token for the live co-editing socket's first message (never the URL), as the other
 * API calls send it; `stale`: the last one was refused, so a fresh one through the refresh cookie.
 */
export async function accessToken(stale: boolean): Promise<string> {
  return (await session.token(stale)) ?? '';
}

/** Moves the note to the trash. */
export async function deleteNote(noteId: string): Promise<void> {
  unwrap(await api.DELETE('/api/notes/{noteID}', { params: { path: { noteID: noteId } } }));
}

export async function fileNote(noteId: string, filing: Partial<Filing>): Promise<Note> {
  return unwrap(await api.PATCH('/api/notes/{noteID}', { params: { path: { noteID: noteId } }, body: filing }));
}

/** A page of the caller's notes and how many match in all (X-Total-Count), when the server says. */
export async function listNotes(query: NoteListQuery, signal?: AbortSignal) {
  const answer = await api.GET('/api/notes', { params: { query }, signal });
  const total = answer.response.headers.get('x-total-count');
  return { rows: unwrap(answer), total: total === null ? null : Number(total) };
}

export async function listSharedNotes(limit: number, offset: number, signal?: AbortSignal): Promise<SharedNoteRow[]> {
  return unwrap(await api.GET('/api/notes/shared', { params: { query: { limit, offset } }, signal }));
}

export async function searchNotes(query: SearchQuery, signal?: AbortSignal) {
  return unwrap(await api.GET('/api/notes/search', { params: { query }, signal }));
}

export async function listFolders(signal?: AbortSignal): Promise<Folder[]> {
  return unwrap(await api.GET('/api/folders', { signal }));
}

export async function listTags(signal?: AbortSignal) {
  return unwrap(await api.GET('/api/tags', { signal }));
}

export async function createFolder(name: string, parentId: string | null) {
  return unwrap(await api.POST('/api/folders', { body: { name, parent_id: parentId } }));
}

/** Renames a folder or moves it under another (`parent_id` null: the top level). */
export async function changeFolder(
  folderId: string,
  body: { name: string } | { parent_id: string | null },
): Promise<void> {
  unwrap(await api.PATCH('/api/folders/{folderID}', { params: { path: { folderID: folderId } }, body }));
}

/** Deletes the folder and every folder in it; the notes inside go to the trash. */
export async function deleteFolder(folderId: string): Promise<void> {
  unwrap(await api.DELETE('/api/folders/{folderID}', { params: { path: { folderID: folderId } } }));
}

/** How titles are compared when a `[[link]]` names a note: case and Unicode composition aside. */
const titleKey = (title: string) => title.trim().normalize('NFC').toLowerCase();

/**
 * The note (the caller's own or shared with them) titled `title`, or null when there is none. The
 * search finds it by its words as a phrase (titles rank first); the exact title decides.
 */
export async function findNoteByTitle(title: string, signal?: AbortSignal): Promise<{ id: string } | null> {
  const words = title.replace(/["*:-]/g, ' ').trim();
  if (words === '') return null;
  const hits = await searchNotes({ q: `"${words.slice(0, 250)}"`, limit: 50 }, signal);
  return hits.find((hit) => titleKey(hit.title) === titleKey(title)) ?? null;
}

/**
 * Titles to offer for a `[[link]]` being typed: the most recent notes, then those matching `typed`
 * as the search does as you type. Titles a link cannot hold (`[`, `]`, `|`, `#`) are left out.
 */
export async function noteTitles(typed: string, signal: AbortSignal): Promise<string[]> {
  const rows =
    typed === ''
      ? (await listNotes({ limit: 20 }, signal)).rows
      : await searchNotes({ q: asYouType(typed), limit: 20 }, signal);
  return [...new Set(rows.map((row) => row.title.trim()))].filter((title) => title !== '' && !/[[\]|#\n]/.test(title));
}
