import { useEffect, useState } from 'preact/hooks';
import { errorMessage } from '../api/client';
import { DiffView } from './diff-view';
import {
  diffOf,
  getNote,
  getVersion,
  labelVersion,
  listVersions,
  restoreVersion,
  type Note,
  type NoteDiff,
  type Version,
  type VersionRow,
} from './api';
import { Markdown } from '../markdown/markdown';
import { navigate } from '../app/router';
import { formatTime } from '../app/format';

const PAGE = 20;

/** A note's versions, newest first, a page at a time; any version, its diff, restore, a name. */
export function HistoryScreen({ noteId }: { noteId: string }) {
  const [note, setNote] = useState<Note | null>(null);
  const [rows, setRows] = useState<VersionRow[] | null>(null);
  const [page, setPage] = useState(0);
  const [selected, setSelected] = useState<Version | null>(null);
  const [diff, setDiff] = useState<NoteDiff | null>(null);
  const [error, setError] = useState('');
  const [status, setStatus] = useState('');
  const [label, setLabel] = useState('');
  /** Loading the note or its versions failed: no "Loading…" beside the error. */
  const [failed, setFailed] = useState(false);

  const load = async () => {
    try {
      setNote(await getNote(noteId));
      setRows(await listVersions(noteId, PAGE + 1, page * PAGE));
      setFailed(false);
    } catch (e) {
      setError(errorMessage(e));
      setFailed(true);
    }
  };
  useEffect(() => void load(), [noteId, page]);
  // A search hit in an earlier version links here with that version: open it at once.
  useEffect(() => {
    const wanted = new URLSearchParams(location.search).get('version');
    if (wanted !== null) void open({ id: wanted } as VersionRow);
  }, [noteId]);

  const open = async (row: VersionRow) => {
    setError('');
    setStatus('');
    setDiff(null);
    try {
      const version = await getVersion(noteId, row.id);
      setSelected(version);
      setLabel(version.label ?? '');
      setDiff(await diffOf(noteId, { to: version.version }).catch(() => null));
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  const compareWithCurrent = async () => {
    if (!selected || !note) return;
    try {
      setDiff(await diffOf(noteId, { from: selected.version, to: note.version }));
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  const restore = async () => {
    if (!selected || !note) return;
    setError('');
    try {
      const restored = await restoreVersion(noteId, note.version, selected.version);
      if (restored === null) throw new Error('The note changed meanwhile: reload the history and try again.');
      setStatus(`Version ${selected.version} restored as version ${restored.version}.`);
      setSelected(null);
      setDiff(null);
      setPage(0);
      await load();
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  const name = async (event: Event) => {
    event.preventDefault();
    if (!selected) return;
    try {
      const updated = await labelVersion(noteId, selected.id, label.trim() === '' ? null : label.trim());
      setSelected(updated);
      setStatus(
        updated.label
          ? `Version ${updated.version} is named “${updated.label}”.`
          : `Version ${updated.version} has no name now.`,
      );
      await load();
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  const visible = rows?.slice(0, PAGE) ?? [];
  return (
    <div class="history">
      <div class="list-head">
        <h1>
          History
          {note && (
            <>
              : <span class="muted">{note.title || 'Untitled'}</span>
            </>
          )}
        </h1>
        <button type="button" class="secondary" onClick={() => navigate(`/notes/${noteId}`)}>
          Back to note
        </button>
      </div>
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
      <div class="history-grid">
        <nav aria-label="Versions, newest first">
          {rows === null ? (
            failed ? (
              <p class="muted">No versions to show.</p>
            ) : (
              <p class="muted">Loading…</p>
            )
          ) : (
            <ol class="rows versions">
              {visible.map((row) => (
                <li key={row.id}>
                  <button
                    type="button"
                    class="version"
                    aria-current={selected?.id === row.id ? 'true' : undefined}
                    aria-describedby={`meta-${row.id}`}
                    onClick={() => open(row)}
                  >
                    Version {row.version}
                  </button>
                  <span id={`meta-${row.id}`} class="meta">
                    {row.version === note?.version && <strong>current · </strong>}
                    {row.label && <strong class="label">{row.label} · </strong>}
                    {row.restored_from != null && `restored from ${row.restored_from} · `}
                    {row.author_username === null ? 'a deleted account · ' : `${row.author_username} · `}
                    <time dateTime={row.created_at}>{formatTime(row.created_at)}</time>
                  </span>
                </li>
              ))}
            </ol>
          )}
          <div class="pager">
            <button type="button" class="secondary" disabled={page === 0} onClick={() => setPage(page - 1)}>
              Newer
            </button>
            <button
              type="button"
              class="secondary"
              disabled={(rows?.length ?? 0) <= PAGE}
              onClick={() => setPage(page + 1)}
            >
              Older
            </button>
          </div>
        </nav>
        <section aria-label="Selected version" class="version-view">
          {selected === null ? (
            <p class="muted">Choose a version to see it, compare it or restore it.</p>
          ) : (
            <>
              <h2>
                Version {selected.version}: {selected.title || 'Untitled'}
              </h2>
              <div class="actions">
                <button type="button" onClick={restore} disabled={selected.version === note?.version}>
                  Restore
                </button>
                <button
                  type="button"
                  class="secondary"
                  onClick={compareWithCurrent}
                  disabled={selected.version === note?.version}
                >
                  Compare with current
                </button>
              </div>
              <form class="inline" onSubmit={name}>
                <label for="version-name">Version name</label>
                <input
                  id="version-name"
                  value={label}
                  maxLength={100}
                  onInput={(e) => setLabel(e.currentTarget.value)}
                />
                <button type="submit" class="secondary">
                  Name version
                </button>
              </form>
              {diff && (
                <DiffView
                  diff={diff}
                  caption={
                    diff.from
                      ? `Changes from version ${diff.from.version} to ${diff.to.version}`
                      : `Version ${diff.to.version} compared with an empty note`
                  }
                />
              )}
              <Markdown source={selected.content} label={`Version ${selected.version} rendered`} remoteKey={noteId} />
            </>
          )}
        </section>
      </div>
    </div>
  );
}
