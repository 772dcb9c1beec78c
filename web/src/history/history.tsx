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
/** Versions saved by one person with pauses no longer than this between them are one editing session. */
const SESSION_GAP_MS = 10 * 60 * 1000;

/**
 * The page's versions (newest first) in editing sessions: a run of versions by one author, each
 * saved within SESSION_GAP_MS of the next, not restored and not named (a name marks a version out).
 */
export function sessionsOf(rows: VersionRow[]): VersionRow[][] {
  const groups: VersionRow[][] = [];
  for (const row of rows) {
    const group = groups.at(-1);
    const newer = group?.at(-1);
    if (
      group !== undefined &&
      newer !== undefined &&
      newer.author_username === row.author_username &&
      newer.restored_from == null &&
      row.restored_from == null &&
      newer.label === null &&
      row.label === null &&
      Date.parse(newer.created_at) - Date.parse(row.created_at) <= SESSION_GAP_MS
    )
      group.push(row);
    else groups.push([row]);
  }
  return groups;
}

/** "+3 lines, −1": what a session changed, in one line. */
export function changeSummary(added: number, removed: number): string {
  if (added === 0 && removed === 0) return 'no change to the text';
  const parts: string[] = [];
  if (added > 0) parts.push(`+${added} ${added === 1 ? 'line' : 'lines'}`);
  if (removed > 0) parts.push(parts.length === 0 ? `−${removed} ${removed === 1 ? 'line' : 'lines'}` : `−${removed}`);
  return parts.join(', ');
}

/** The words a search hit matched (`?q=` from the search results), to highlight in the version shown. */
function searchedWords(): string[] {
  const q = new URLSearchParams(location.search).get('q') ?? '';
  return q
    .split(/\s+/)
    .map((w) => w.trim())
    .filter((w) => w.length > 0);
}

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
  const [marked] = useState(searchedWords);

  // Each session's one-line summary: the diff from the version before it to its newest version.
  const [summaries, setSummaries] = useState<Record<string, string>>({});
  useEffect(() => {
    if (rows === null) return;
    let live = true;
    const groups = sessionsOf(rows.slice(0, PAGE));
    void Promise.all(
      groups.map(async (group) => {
        const newest = group[0]!;
        const oldest = group.at(-1)!;
        const before = rows[rows.indexOf(oldest) + 1];
        try {
          let added = 0;
          let removed = 0;
          if (before !== undefined || group.length === 1) {
            const d = await diffOf(noteId, { ...(before ? { from: before.version } : {}), to: newest.version });
            ({ added, removed } = d.stats);
          } else {
            // The session starts the history shown: its first version against what came before it
            // (or the empty note), then the rest of the session.
            const [first, rest] = await Promise.all([
              diffOf(noteId, { to: oldest.version }),
              diffOf(noteId, { from: oldest.version, to: newest.version }),
            ]);
            added = first.stats.added + rest.stats.added;
            removed = first.stats.removed + rest.stats.removed;
          }
          return [newest.id, changeSummary(added, removed)] as const;
        } catch {
          return [newest.id, ''] as const;
        }
      }),
    ).then((pairs) => {
      if (live) setSummaries(Object.fromEntries(pairs));
    });
    return () => {
      live = false;
    };
  }, [rows]);
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
            <div class="sessions">
              {sessionsOf(visible).map((group) => {
                const newest = group[0]!;
                const oldest = group.at(-1)!;
                const summary = summaries[newest.id];
                return (
                  <div key={newest.id} class="session" role="group" aria-labelledby={`session-${newest.id}`}>
                    <p class="session-head" id={`session-${newest.id}`}>
                      <strong>{summary === undefined ? '…' : summary || 'Changes not available'}</strong>
                      {' · '}
                      {newest.author_username ?? 'a deleted account'} ·{' '}
                      {group.length === 1 ? (
                        <time dateTime={newest.created_at}>{formatTime(newest.created_at)}</time>
                      ) : (
                        <>
                          <time dateTime={oldest.created_at}>{formatTime(oldest.created_at)}</time> to{' '}
                          <time dateTime={newest.created_at}>{formatTime(newest.created_at)}</time> · {group.length}{' '}
                          versions
                        </>
                      )}
                    </p>
                    <ol class="rows versions">
                      {group.map((row) => (
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
                  </div>
                );
              })}
            </div>
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
              <Markdown
                source={selected.content}
                label={`Version ${selected.version} rendered`}
                remoteKey={noteId}
                highlight={marked}
              />
            </>
          )}
        </section>
      </div>
    </div>
  );
}
