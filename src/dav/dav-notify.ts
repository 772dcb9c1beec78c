import type { LiveEvents } from '../events/live.js';
import type { Entry } from './tree.js';

/**
 * What a WebDAV write did to notes, for live events. The five `live.noteChanged` calls of WebDAV
 * are all here, made by the route right after its service call; they go when the notes and
 * folders services announce their own changes (after commit).
 */
export type DavNotice =
  | { kind: 'put'; outcome: 'created' | 'updated'; now: Entry | undefined }
  | { kind: 'delete'; entry: Entry }
  | { kind: 'move'; source: Entry; moved: Entry | undefined }
  | { kind: 'copy'; copied: Entry | undefined };

export function notify(live: LiveEvents, ownerId: string, notice: DavNotice): void {
  switch (notice.kind) {
    case 'put': {
      const { outcome, now } = notice;
      if (now?.kind === 'note') {
        live.noteChanged(outcome === 'created' ? 'note.created' : 'note.updated', now.id, outcome === 'created' ? {} : { version: now.version, authorId: ownerId });
      }
      return;
    }
    case 'delete':
      if (notice.entry.kind === 'note') live.noteChanged('note.trashed', notice.entry.id);
      return;
    case 'move': {
      const { source, moved } = notice;
      if (moved?.kind === 'note') {
        if (source.kind === 'note' && moved.id === source.id && moved.version === source.version) live.noteChanged('note.filed', moved.id);
        else live.noteChanged(moved.id === source.id ? 'note.updated' : 'note.created', moved.id, { version: moved.version, authorId: ownerId });
      }
      return;
    }
    case 'copy':
      if (notice.copied?.kind === 'note') live.noteChanged('note.created', notice.copied.id);
  }
}
