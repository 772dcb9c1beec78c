import type { Note } from './api';

/** The address of a note not saved yet: `/notes/new`. */
export const NEW = 'new';

/** The caller's role on a note shared with them (null: their own note). */
export type Role = 'viewer' | 'editor' | null;

/** Unsaved text of an earlier visit, restored from this device: the version it was typed on, and the server's. */
export interface Restored {
  version: number;
  server: Note;
}

/**
 * The editor as of its latest render, for answers and timers that come later: the live event of a
 * save made here can arrive before that save's answer has updated `note`, and judged against the
 * older note it looked like a newer version from elsewhere; a draft is written as it is now.
 */
export interface EditorNow {
  note: Note | null;
  dirty: boolean;
  title: string;
  role: Role;
}

/** A new note as the editor holds it until its first save: version 0, on no server. */
export function unsavedNote(me: string, folderId: string | null): Note {
  const now = new Date().toISOString();
  return {
    id: NEW,
    owner_id: me,
    title: 'Untitled',
    content: '',
    version: 0,
    version_id: '',
    created_at: now,
    updated_at: now,
    folder_id: folderId,
    pinned: false,
    archived: false,
    tags: [],
  };
}
