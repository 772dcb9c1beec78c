import type { JSX } from 'preact';
import { navigate } from '../app/router';
import { HistoryScreen, preloadOn } from '../app/screens';
import type { Note } from './api';
import type { Role } from './editor-state';
import { useConnection } from '../offline/connection';

/** The note's status (unsaved, saved as version n) and what can be done with it. */
export function EditorToolbar({
  note,
  role,
  dirty,
  status,
  busy,
  editing,
  preview,
  sharing,
  attachButton,
  more,
  on,
}: {
  note: Note;
  role: Role;
  dirty: boolean;
  status: string;
  busy: boolean;
  editing: boolean;
  preview: boolean;
  sharing: boolean;
  attachButton: JSX.Element | null;
  /** Whether the phone's "More" menu (the secondary actions and the filing bar) is open. */
  more: boolean;
  on: {
    toggleEditing: () => void;
    togglePreview: () => void;
    toggleSharing: () => void;
    toggleMore: () => void;
    remove: () => void;
  };
}) {
  const owner = role === null;
  const canEdit = role !== 'viewer';
  const onServer = note.version > 0;
  const { offline } = useConnection();
  // Always says where the text is: typed and kept on this device, on its way, or saved.
  const state = busy
    ? 'Saving…'
    : dirty
      ? offline
        ? 'Offline — kept on this device'
        : 'Unsaved changes'
      : status || (onServer ? `Version ${note.version}` : 'New note, not saved yet');
  return (
    <div class="toolbar">
      <a class="back" href="/">
        ← Notes
      </a>
      <span class={`state ${dirty ? 'dirty' : ''}`} role="status" aria-live="polite">
        {state}
      </span>
      {canEdit && (
        <button type="submit" disabled={busy} aria-keyshortcuts="Control+S Meta+S">
          Save
        </button>
      )}
      {canEdit && (
        <button
          type="button"
          class="secondary toggle"
          aria-pressed={editing}
          aria-keyshortcuts="E"
          onClick={on.toggleEditing}
        >
          Edit
        </button>
      )}
      {canEdit && editing && (
        <button
          type="button"
          class="secondary toggle"
          aria-pressed={preview}
          aria-keyshortcuts="P"
          onClick={on.togglePreview}
        >
          Preview
        </button>
      )}
      {/* On a phone only: the secondary actions (and the filing bar) wait behind "More". */}
      <button
        type="button"
        class="secondary more-toggle"
        aria-expanded={more}
        aria-controls="note-more"
        onClick={on.toggleMore}
      >
        More<span aria-hidden="true"> ▾</span>
      </button>
      <div class="more-actions" id="note-more" data-open={more ? '' : undefined}>
        {canEdit && attachButton}
        {onServer && (
          <button
            type="button"
            class="secondary"
            {...preloadOn(HistoryScreen)}
            onClick={() => navigate(`/notes/${note.id}/history`)}
          >
            History
          </button>
        )}
        {owner && onServer && (
          <button type="button" class="secondary" aria-expanded={sharing} onClick={on.toggleSharing}>
            Share
          </button>
        )}
        {owner && onServer && (
          <button type="button" class="danger" onClick={on.remove}>
            Delete
          </button>
        )}
      </div>
    </div>
  );
}
