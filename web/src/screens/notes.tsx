import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, errorMessage, rawJson, unwrap, type NoteRow, type SearchResult } from '../api/client';
import { navigate } from '../router';
import { Editor } from './editor';

/** The notes list (with search) beside the open note; on a phone one of the two at a time. */
export function NotesScreen({ noteId }: { noteId: string | null }) {
  const [notes, setNotes] = useState<NoteRow[] | null>(null);
  const [error, setError] = useState('');
  const [query, setQuery] = useState('');
  const [throughHistory, setThroughHistory] = useState(false);
  const [results, setResults] = useState<SearchResult[] | null>(null);
  const [flash, setFlash] = useState('');

  const load = useCallback(async () => {
    try {
      setNotes(unwrap(await api.GET('/api/notes', { params: { query: { limit: 100 } } })));
    } catch (e) {
      setError(errorMessage(e));
    }
  }, []);
  useEffect(() => void load(), [load]);

  useEffect(() => {
    const q = query.trim();
    if (q === '') return setResults(null);
    const timer = setTimeout(async () => {
      try {
        const params = new URLSearchParams({ q, history: String(throughHistory), limit: '50' });
        setResults(await rawJson<SearchResult[]>(`/api/notes/search?${params}`));
        setError('');
      } catch (e) {
        setError(errorMessage(e));
      }
    }, 200);
    return () => clearTimeout(timer);
  }, [query, throughHistory, notes]);

  const create = async () => {
    try {
      const note = unwrap(await api.POST('/api/notes', { body: { title: 'Untitled', content: '' } }));
      await load();
      navigate(`/notes/${note.id}`);
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  return (
    <div class={`notes ${noteId ? 'has-open' : ''}`}>
      <section class="list" aria-labelledby="notes-heading">
        <div class="list-head">
          <h1 id="notes-heading">Notes</h1>
          <button type="button" onClick={create}>New note</button>
        </div>
        <div role="search">
          <label for="search" class="sr-only">Search notes</label>
          <input id="search" type="search" placeholder="Search notes" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
          <label class="check"><input type="checkbox" checked={throughHistory} onChange={(e) => setThroughHistory(e.currentTarget.checked)} /> Include earlier versions</label>
        </div>
        {flash && <p role="status" class="flash">{flash}</p>}
        {error && <p class="error" role="alert">{error}</p>}
        {results !== null ? <SearchResults results={results} current={noteId} /> : <NoteList notes={notes} current={noteId} />}
      </section>
      <section class="open" aria-label="Note">
        {noteId ? (
          <Editor key={noteId} noteId={noteId} onChanged={load}
            onDeleted={(title) => { setFlash(`“${title}” moved to the trash.`); void load(); navigate('/'); }} />
        ) : (
          <div class="empty"><p>Select a note or create one with “New note”.</p></div>
        )}
      </section>
    </div>
  );
}

function NoteList({ notes, current }: { notes: NoteRow[] | null; current: string | null }) {
  if (notes === null) return <p class="muted" role="status">Loading notes…</p>;
  if (notes.length === 0) return <p class="muted">No notes yet.</p>;
  return (
    <ul class="rows" aria-label="Notes, most recent first">
      {notes.map((note) => (
        <li key={note.id}>
          <a href={`/notes/${note.id}`} aria-current={note.id === current ? 'page' : undefined}>
            <span class="row-title">{note.title || 'Untitled'}</span>
            <time dateTime={note.updated_at}>{formatTime(note.updated_at)}</time>
          </a>
        </li>
      ))}
    </ul>
  );
}

function SearchResults({ results, current }: { results: SearchResult[]; current: string | null }) {
  if (results.length === 0) return <p class="muted" role="status">No notes match.</p>;
  return (
    <ul class="rows" aria-label="Search results">
      {results.map((r) => (
        <li key={r.id}>
          <a href={`/notes/${r.id}`} aria-current={r.id === current ? 'page' : undefined}>
            <span class="row-title">{r.title || 'Untitled'}</span>
            <span class="snippet">{highlight(r.snippet, r.highlights)}</span>
            {r.version !== undefined && <span class="muted">in version {r.version}</span>}
          </a>
        </li>
      ))}
    </ul>
  );
}

function highlight(text: string, ranges: number[][]) {
  const out = [];
  let at = 0;
  for (const [start = 0, end = 0] of [...ranges].sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0))) {
    if (start < at) continue;
    out.push(text.slice(at, start), <mark>{text.slice(start, end)}</mark>);
    at = end;
  }
  out.push(text.slice(at));
  return out;
}

export function formatTime(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}
