import { api, unwrap, type Json } from '../api/client';
import type { components } from '../api/schema';

export { getNote } from '../notes/api';
export type { Note } from '../api/client';
export type VersionRow = components['schemas']['VersionRow'];
export type Version = Json<'/api/notes/{noteID}/{versionID}', 'get'>;

/** GET /api/notes/{id}/diff (docs/api.md "Diff"), as the API's schema describes it. */
export async function diffOf(noteId: string, query: { from?: number; to?: number }) {
  return unwrap(await api.GET('/api/notes/{noteID}/diff', { params: { path: { noteID: noteId }, query } }));
}
export type NoteDiff = Awaited<ReturnType<typeof diffOf>>;

export async function listVersions(noteId: string, limit: number, offset: number): Promise<VersionRow[]> {
  return unwrap(
    await api.GET('/api/notes/{noteID}/versions', { params: { path: { noteID: noteId }, query: { limit, offset } } }),
  );
}

export async function getVersion(noteId: string, versionId: string): Promise<Version> {
  return unwrap(
    await api.GET('/api/notes/{noteID}/{versionID}', { params: { path: { noteID: noteId, versionID: versionId } } }),
  );
}

/** Restores an old version as the newest, if the note is still at `current` (If-Match); null when it moved on. */
export async function restoreVersion(noteId: string, current: number, version: number) {
  const answer = await api.POST('/api/notes/{noteID}/restore', {
    params: { path: { noteID: noteId }, header: { 'if-match': `"${current}"` } },
    body: { version },
  });
  if (answer.response.status === 412) return null;
  return unwrap(answer);
}

/** Names a version (null: takes its name away). */
export async function labelVersion(noteId: string, versionId: string, label: string | null): Promise<Version> {
  return unwrap(
    await api.PATCH('/api/notes/{noteID}/{versionID}', {
      params: { path: { noteID: noteId, versionID: versionId } },
      body: { label },
    }),
  );
}
