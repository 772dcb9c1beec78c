import { useEffect } from 'preact/hooks';
import { errorMessage } from '../api/client';
import { openForReading } from '../app/device-settings';
import { getNote, memberRole, type Note } from './api';
import { clearDraft, loadDraft } from './drafts';
import { NEW, unsavedNote, type EditorNow, type Restored, type Role } from './editor-state';

/** A note as it opens: the version to edit from, the text to show (a draft's, if one was restored), and how. */
export interface Opened {
  note: Note;
  role: Role;
  /** The server's version, when a draft typed on an older one was restored. */
  newer: Note | null;
  title: string;
  content: string;
  restored: Restored | null;
  editing: boolean;
}

/**
 * Loads the note, with the caller's role on it, and brings back text typed here and never saved (a
 * reload, a crash, an ended session) against the version it was typed on: saving it then goes
 * through the conflict check. A new note is on screen at once; only text of an earlier new note,
 * never saved, comes back into it.
 */
export function useNoteLoad({
  noteId,
  me,
  folderId,
  created,
  now,
  onOpened,
  onRestored,
  onFailed,
}: {
  noteId: string;
  me: string;
  folderId: string | null;
  /** The id this editor's new note was given by its first save: the address follows, the text stays. */
  created: { current: string | null };
  now: { current: EditorNow };
  onOpened: (opened: Opened) => void;
  /** A new note's unsaved text from an earlier visit, into the blank note on screen. */
  onRestored: (text: { title: string; content: string }, restored: Restored) => void;
  onFailed: (message: string) => void;
}): void {
  useEffect(() => {
    if (noteId === created.current) return;
    if (noteId === NEW) {
      // (This read is queued before the draft keeper's delete of an unchanged note's draft, and
      // IndexedDB runs transactions on one store in the order they were made.)
      void loadDraft(me, NEW).then(
        (draft) => {
          if (draft === undefined || now.current.dirty || now.current.note?.version !== 0) return;
          onRestored({ title: draft.title, content: draft.content }, { version: 0, server: unsavedNote(me, folderId) });
        },
        () => undefined,
      );
      return;
    }
    (async () => {
      try {
        const loaded = await getNote(noteId);
        const role = loaded.owner_id === me ? null : await memberRole(noteId, me);
        const draft = role === 'viewer' ? undefined : await loadDraft(me, noteId);
        const differs = draft !== undefined && (draft.title !== loaded.title || draft.content !== loaded.content);
        if (draft !== undefined && !differs) void clearDraft(me, noteId);
        const older = differs && draft.baseVersion < loaded.version;
        onOpened({
          note: older ? { ...loaded, version: draft.baseVersion } : loaded,
          role,
          newer: older ? loaded : null,
          title: differs ? draft.title : loaded.title,
          content: differs ? draft.content : loaded.content,
          restored: differs ? { version: draft.baseVersion, server: loaded } : null,
          // Unsaved text of an earlier visit opens where it was being written.
          editing: differs || loaded.content === '' || !openForReading.on(),
        });
      } catch (e) {
        onFailed(errorMessage(e));
      }
    })();
  }, [noteId]);
}
