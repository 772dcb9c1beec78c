import { useEffect } from 'preact/hooks';
import { clearDraft, saveDraft } from './drafts';
import type { EditorNow } from './editor-state';
import type { NoteText } from './note-text';

/**
 * Every change is kept on this device as it is typed (a moment after the typing pauses), and let
 * go once nothing is unsaved. `discarded`: the user chose to leave without saving, and the draft
 * went with the answer.
 */
export function useDraftKeeping({
  me,
  noteId,
  now,
  text,
  edits,
  discarded,
  unsaved = () => now.current.dirty,
}: {
  me: string;
  noteId: string;
  now: { current: EditorNow };
  text: NoteText;
  edits: number;
  discarded: { current: boolean };
  /**
   * Whether anything is unsaved at this moment. Live, that is typing the server has not
   * acknowledged yet, which the render (`dirty`) shows only after half a second.
   */
  unsaved?: () => boolean;
}): void {
  const { note, dirty, title, role } = now.current;
  // What is unsaved as of the latest render, not as of the effect that calls this: a save's answer
  // is rendered at once but its effects wait for the next frame, and a pause ending in between
  // would otherwise write the text just saved back as a draft (a new note's, offered again by the
  // next New note).
  const keepDraft = () => {
    const latest = now.current;
    if (!unsaved() || latest.note === null || discarded.current || latest.role === 'viewer') return;
    void saveDraft(me, latest.note.id, {
      title: latest.title,
      content: text.get(),
      baseVersion: latest.note.version,
      savedAt: new Date().toISOString(),
    });
  };

  useEffect(() => {
    if (note === null || role === 'viewer') return;
    // Leaving the page within the pause, or with typing not yet with the server: written at once
    // (best effort, as the page goes).
    window.addEventListener('pagehide', keepDraft);
    const stop = () => window.removeEventListener('pagehide', keepDraft);
    if (!dirty) {
      void clearDraft(me, noteId);
      return stop;
    }
    const timer = setTimeout(keepDraft, 250);
    return () => {
      clearTimeout(timer);
      stop();
    };
  }, [title, edits, dirty, note]);
  // Gone from the screen within the pause without being asked (the session ended, say): written now.
  useEffect(() => () => keepDraft(), []);
}
