import { createNote, saveVersion } from '../notes/api';
import { clearDraft, listDrafts } from '../notes/drafts';

/**
 * Saves, by itself, what was written on this device while the service could not be reached, in
 * notes no editor has open (the open note's editor saves its own text: `open`). A new note is
 * created; an edit is saved as a version of the one it was typed on (If-Match), and on a conflict
 * stays kept here: opening the note offers it back against the newer version. Returns how many
 * were saved.
 */
let running: Promise<number> | null = null;
export function saveKeptDrafts(me: string, open: string | null): Promise<number> {
  running ??= (async () => {
    let saved = 0;
    for (const { noteId, draft } of await listDrafts(me)) {
      if (noteId === open) continue;
      try {
        if (noteId === 'new') {
          await createNote({ title: draft.title, content: draft.content, folder_id: null });
        } else {
          const answer = await saveVersion(noteId, draft.baseVersion, { title: draft.title, content: draft.content });
          if (typeof answer !== 'object' || !('saved' in answer)) continue;
        }
        await clearDraft(me, noteId);
        saved += 1;
      } catch {
        // Still unreachable, or refused: kept, for the next time the connection comes back.
      }
    }
    return saved;
  })().finally(() => {
    running = null;
  });
  return running;
}
