import { useEffect, useState } from 'preact/hooks';
import { useLiveChanges } from '../api/events';
import { getNote, type Note } from './api';
import type { EditorNow } from './editor-state';

/**
 * Versions saved elsewhere (another tab, device or person) since this one was loaded, and by whom.
 * Saves elsewhere arrive as they happen: shown at once (`show`) when nothing here is unsaved, else
 * offered (and the conflict flow still applies to a save from here). Coming back to the tab looks too.
 */
export function useNewerVersion({
  noteId,
  note,
  dirty,
  now,
  show,
}: {
  noteId: string;
  note: Note | null;
  dirty: boolean;
  now: { current: EditorNow };
  show: (server: Note, by: string | null) => void;
}) {
  const [newer, setNewer] = useState<Note | null>(null);
  const [newerBy, setNewerBy] = useState<string | null>(null);
  /** Why the note is gone from under the user (its owner moved it to the trash). */
  const [gone, setGone] = useState('');

  /** Whether the server has a newer version than the one shown (it is offered). */
  const look = async () => {
    if (document.visibilityState !== 'visible' || note === null || note.version === 0) return;
    const server = await getNote(noteId).catch(() => undefined);
    const latest = now.current.note;
    if (server !== undefined && latest !== null && server.version > latest.version) setNewer(server);
  };
  useEffect(() => {
    window.addEventListener('focus', look);
    document.addEventListener('visibilitychange', look);
    return () => {
      window.removeEventListener('focus', look);
      document.removeEventListener('visibilitychange', look);
    };
  }, [noteId, note]);

  useLiveChanges(
    (change) => {
      // Changes may have been missed: look, as when coming back to the tab.
      if (change.type === 'resync') {
        void look();
        return;
      }
      if (change.data.id !== noteId || note === null) return;
      if (change.type === 'note.trashed' || change.type === 'note.deleted') {
        setGone('This note was moved to the trash by its owner.');
        return;
      }
      if (change.type !== 'note.updated' || (change.data.version ?? 0) <= note.version) return;
      void (async () => {
        const server = await getNote(noteId).catch(() => undefined);
        const latest = now.current;
        if (server === undefined || latest.note === null || server.version <= latest.note.version) return;
        const by = change.data.author_username ?? null;
        if (latest.dirty) {
          setNewer(server);
          setNewerBy(by);
        } else {
          show(server, by);
        }
      })();
    },
    [noteId, note, dirty],
  );

  /** Nothing newer on offer (it was loaded, or the user's text was kept over it). */
  const clear = () => {
    setNewer(null);
    setNewerBy(null);
  };
  return { newer, newerBy, gone, offer: setNewer, clear };
}
