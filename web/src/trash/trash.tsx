import { useState } from 'preact/hooks';
import { errorMessage } from '../api/client';
import { emptyTrash, listTrash, purgeFromTrash, restoreFromTrash, type TrashEntry } from './api';
import { Loaded, useResource } from '../api/resource';
import { formatTime } from '../app/format';

export function TrashScreen() {
  const trash = useResource((signal) => listTrash(100, signal), []);
  const [error, setError] = useState('');
  const [status, setStatus] = useState('');

  const act = async (row: TrashEntry, purge: boolean) => {
    setError('');
    if (purge && !window.confirm(`Delete “${row.title || 'Untitled'}” and all its versions for good?`)) return;
    try {
      await (purge ? purgeFromTrash(row.id) : restoreFromTrash(row.id));
    } catch (e) {
      setError(`Could not ${purge ? 'delete' : 'restore'} the note: ${errorMessage(e)}`);
      return;
    }
    setStatus(
      purge
        ? `“${row.title || 'Untitled'}” was deleted for good.`
        : `“${row.title || 'Untitled'}” is back in your notes.`,
    );
    await trash.reload();
  };

  const empty = async (count: number) => {
    setError('');
    if (
      !window.confirm(
        `Delete all ${count} ${count === 1 ? 'note' : 'notes'} in the trash, and their versions, for good?`,
      )
    )
      return;
    try {
      const deleted = await emptyTrash();
      setStatus(`The trash is emptied: ${deleted} ${deleted === 1 ? 'note' : 'notes'} deleted for good.`);
    } catch (e) {
      setError(`Could not empty the trash: ${errorMessage(e)}`);
    }
    await trash.reload();
  };

  return (
    <div class="page">
      <h1>Trash</h1>
      <p class="muted">Deleted notes stay here until their purge date, then they are deleted for good.</p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {status && (
        <p class="flash" role="status">
          {status}
        </p>
      )}
      <Loaded resource={trash} what="the trash">
        {(rows: TrashEntry[]) =>
          rows.length === 0 ? (
            <p>The trash is empty.</p>
          ) : (
            <>
              <button type="button" class="danger" onClick={() => empty(rows.length)}>
                Empty trash
              </button>
              <ul class="rows table">
                {rows.map((row) => (
                  <li key={row.id} aria-label={row.title || 'Untitled'}>
                    <span class="row-title">{row.title || 'Untitled'}</span>
                    <span class="meta">
                      deleted {formatTime(row.deleted_at)} · purged {formatTime(row.purge_at)}
                    </span>
                    <span class="actions">
                      <button type="button" onClick={() => act(row, false)}>
                        Restore
                      </button>
                      <button type="button" class="danger" onClick={() => act(row, true)}>
                        Delete forever
                      </button>
                    </span>
                  </li>
                ))}
              </ul>
            </>
          )
        }
      </Loaded>
    </div>
  );
}
