import { api, unwrap, type Json } from '../api/client';
import type { components } from '../api/schema';

export type ShareRow = components['schemas']['Share'];
export type Member = components['schemas']['Member'];
/** A note as its share link shows it. */
export type SharedNote = Json<'/api/shared/{token}', 'get'>;

export async function listShares(noteId: string): Promise<ShareRow[]> {
  return unwrap(await api.GET('/api/notes/{noteID}/shares', { params: { path: { noteID: noteId } } }));
}

/** A link to the latest version (`version` null) or to one version for good, expiring or not. */
export async function createShare(
  noteId: string,
  body: { version: number | null; expires_at: string | null },
): Promise<ShareRow> {
  return unwrap(await api.POST('/api/notes/{noteID}/shares', { params: { path: { noteID: noteId } }, body }));
}

export async function revokeShare(noteId: string, shareId: string): Promise<void> {
  unwrap(
    await api.DELETE('/api/notes/{noteID}/shares/{shareID}', {
      params: { path: { noteID: noteId, shareID: shareId } },
    }),
  );
}

export async function listMembers(noteId: string): Promise<Member[]> {
  return unwrap(await api.GET('/api/notes/{noteID}/members', { params: { path: { noteID: noteId } } }));
}

export async function addMember(noteId: string, username: string, role: Member['role']): Promise<void> {
  unwrap(
    await api.POST('/api/notes/{noteID}/members', { params: { path: { noteID: noteId } }, body: { username, role } }),
  );
}

export async function changeMemberRole(noteId: string, userId: string, role: Member['role']): Promise<void> {
  unwrap(
    await api.PATCH('/api/notes/{noteID}/members/{userID}', {
      params: { path: { noteID: noteId, userID: userId } },
      body: { role },
    }),
  );
}

export async function removeMember(noteId: string, userId: string): Promise<void> {
  unwrap(
    await api.DELETE('/api/notes/{noteID}/members/{userID}', { params: { path: { noteID: noteId, userID: userId } } }),
  );
}

// A shared link's page is read by anyone: no session, no access token, no cookies.
const sharedBase = (token: string) => `/api/shared/${encodeURIComponent(token)}`;

/** The note behind a share link, or null when the link does not work (unknown, revoked, expired). */
export async function readSharedNote(token: string): Promise<SharedNote | null> {
  const response = await fetch(sharedBase(token), { credentials: 'omit' });
  if (response.status === 404) return null;
  if (!response.ok) throw new Error(String(response.status));
  return (await response.json()) as SharedNote;
}

/** An object URL for a file in a shared note, from the link's own file route. */
export async function sharedAttachmentUrl(token: string, id: string): Promise<string> {
  const response = await fetch(`${sharedBase(token)}/attachments/${id}`, { credentials: 'omit' });
  if (!response.ok) throw new Error(String(response.status));
  return URL.createObjectURL(await response.blob());
}
