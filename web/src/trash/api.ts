import { api, unwrap } from '../api/client';

export type { TrashEntry } from '../api/client';

export async function listTrash(limit: number, signal?: AbortSignal) {
  return unwrap(await api.GET('/api/trash', { params: { query: { limit } }, signal }));
}

export async function restoreFromTrash(noteId: string): Promise<void> {
  unwrap(await api.POST('/api/trash/{noteID}/restore', { params: { path: { noteID: noteId } } }));
}

/** Deletes the note and all its versions for good. */
export async function purgeFromTrash(noteId: string): Promise<void> {
  unwrap(await api.DELETE('/api/trash/{noteID}', { params: { path: { noteID: noteId } } }));
}

/** Empties the trash: every note in it and their versions, for good; how many went. */
export async function emptyTrash(): Promise<number> {
  return unwrap(await api.DELETE('/api/trash')).deleted;
}
