import { useEffect, useState } from 'preact/hooks';
import { errorMessage } from '../api/client';
import { fileNote, type Filing, type Folder, type Note } from './api';
import { folderPaths } from './sidebar';

/**
 * Where a note is filed: Pin/Unpin, Archive/Unarchive and Move to a folder. Filing is not an edit
 * (no version, no unsaved text is touched), so it applies at once.
 */
export function FilingBar({
  note,
  folders,
  onFiled,
  open = true,
}: {
  /** On a phone the bar waits behind the toolbar's More (hidden until it is open). */
  open?: boolean;
  note: Note;
  folders: Folder[];
  onFiled: (filing: Filing) => void;
}) {
  const [target, setTarget] = useState(note.folder_id ?? '');
  const [error, setError] = useState('');
  const [status, setStatus] = useState('');
  useEffect(() => setTarget(note.folder_id ?? ''), [note.folder_id]);
  // "Moved to …" is a confirmation, not a state: it goes after a few seconds.
  useEffect(() => {
    if (status === '') return;
    const timer = setTimeout(() => setStatus(''), 5000);
    return () => clearTimeout(timer);
  }, [status]);
  const paths = folderPaths(folders);

  const patch = async (body: Partial<Filing>, done: string) => {
    try {
      const updated = await fileNote(note.id, body);
      onFiled({ folder_id: updated.folder_id, pinned: updated.pinned, archived: updated.archived });
      setError('');
      setStatus(done);
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const destination = target === '' ? 'the top level' : `“${paths.get(target) ?? 'the folder'}”`;

  return (
    <div class="filing filing-wrap" data-open={open ? '' : undefined}>
      <button
        type="button"
        class="secondary"
        onClick={() => void patch({ pinned: !note.pinned }, note.pinned ? 'Unpinned.' : 'Pinned.')}
      >
        {note.pinned ? 'Unpin' : 'Pin'}
      </button>
      <button
        type="button"
        class="secondary"
        onClick={() => void patch({ archived: !note.archived }, note.archived ? 'Back from the archive.' : 'Archived.')}
      >
        {note.archived ? 'Unarchive' : 'Archive'}
      </button>
      <label for="move-to">Folder</label>
      <select id="move-to" value={target} onChange={(e) => setTarget(e.currentTarget.value)}>
        <option value="">Top level</option>
        {[...paths]
          .sort((a, b) => a[1].localeCompare(b[1]))
          .map(([id, path]) => (
            <option key={id} value={id}>
              {path}
            </option>
          ))}
      </select>
      <button
        type="button"
        class="secondary"
        disabled={target === (note.folder_id ?? '')}
        onClick={() => void patch({ folder_id: target === '' ? null : target }, `Moved to ${destination}.`)}
      >
        Move
      </button>
      <span class="muted" role="status">
        {status}
      </span>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
