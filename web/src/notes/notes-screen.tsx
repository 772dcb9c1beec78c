import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { errorMessage } from '../api/client';
import {
  fileNote,
  listFolders,
  listNotes,
  listSharedNotes,
  listTags,
  searchNotes,
  type Folder,
  type SearchResult,
  type TagCount,
} from './api';
import { scopeHref, scopeOf, scopeSearch, Sidebar, type Scope } from './sidebar';
import { confirmLeave, navigate, useSearch } from '../app/router';
import { asYouType } from './search-query';
import { restoreFromTrash } from '../trash/api';
import { Editor, NEW } from './editor';
import { FIND, NoteByTitle } from './note-by-title';
import { useLiveChanges } from '../api/events';
import { NoteList, type SharedRow } from './note-list';
import { prefetchCodeMirror } from './markdown-editor';

/** Notes the list asks for at a time. */
const PAGE = 100;

/** The list's query for a scope (the archive lists only archived notes). */
function scopeQuery(scope: Scope): { archived?: 'true'; folder?: string; tag?: string } {
  switch (scope.kind) {
    case 'archive':
      return { archived: 'true' };
    case 'folder':
      return { folder: scope.id };
    case 'root':
      return { folder: 'root' };
    case 'tag':
      return { tag: scope.name };
    default:
      return {};
  }
}

/** The notes list (with search) beside the open note; on a phone one of the two at a time. */
export function NotesScreen({ noteId, me, myName }: { noteId: string | null; me: string; myName: string }) {
  const [notes, setNotes] = useState<SharedRow[] | null>(null);
  const [error, setError] = useState('');
  const [query, setQuery] = useState('');
  const [throughHistory, setThroughHistory] = useState(false);
  const [results, setResults] = useState<SearchResult[] | null>(null);
  const [flash, setFlash] = useState('');
  /** A note just deleted: the flash offers Undo (restore from the trash) until the next message. */
  const [undoable, setUndoable] = useState<{ id: string; title: string } | null>(null);
  // A plain confirmation goes away by itself; one with Undo stays until dismissed or replaced.
  useEffect(() => {
    if (flash === '' || undoable !== null) return;
    const timer = setTimeout(() => setFlash(''), FLASH_MS);
    return () => clearTimeout(timer);
  }, [flash, undoable]);
  const undoDelete = async () => {
    if (undoable === null) return;
    const { id, title } = undoable;
    try {
      await restoreFromTrash(id);
      setUndoable(null);
      setFlash(`“${title}” is back.`);
      refresh();
      navigate(`/notes/${id}`);
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const search = useSearch();
  const scope = scopeOf(search);
  const scopeKey = scopeSearch(scope);
  const [folders, setFolders] = useState<Folder[]>([]);
  const [tags, setTags] = useState<TagCount[]>([]);
  const [drawer, setDrawer] = useState(false);
  /** The last page was full: there may be more notes than the list shows. */
  const [more, setMore] = useState(false);
  /** How many notes the scope holds in all (X-Total-Count), when the server says. */
  const [total, setTotal] = useState<number | null>(null);

  /** A page of the scope's notes, from `offset`, and how many there are in all (not said for shared notes). */
  const page = useCallback(
    async (offset: number, signal: AbortSignal): Promise<{ rows: SharedRow[]; total: number | null }> => {
      if (scope.kind === 'shared') return { rows: await listSharedNotes(PAGE, offset, signal), total: null };
      return listNotes({ limit: PAGE, offset, ...scopeQuery(scope) }, signal);
    },
    [scopeKey],
  );

  // Each (re)load aborts the requests of the one before, and a page asked for meanwhile: an answer
  // for another scope, or an older state of the list, never lands after a newer one.
  const inFlight = useRef<AbortController | null>(null);
  const loadingMore = useRef(false);
  const loaded = useRef(0);
  /** The list from the top, as many rows as `rows` (the pages already scrolled through stay), with folders and tags. */
  const load = useCallback(
    async (rows = PAGE) => {
      inFlight.current?.abort();
      const controller = new AbortController();
      inFlight.current = controller;
      loadingMore.current = false;
      const { signal } = controller;
      try {
        const pages = Math.max(1, Math.ceil(rows / PAGE));
        const [answers, folderList, tagList] = await Promise.all([
          Promise.all(Array.from({ length: pages }, (_, i) => page(i * PAGE, signal))),
          listFolders(signal),
          listTags(signal),
        ]);
        // Pages fetched side by side can overlap when a note moved up meanwhile: each note once.
        const all = [...new Map(answers.flatMap((a) => a.rows).map((row) => [row.id, row])).values()];
        loaded.current = all.length;
        setNotes(all);
        setTotal(answers[0]!.total);
        setMore(answers.at(-1)!.rows.length === PAGE);
        setFolders(folderList);
        setTags(tagList);
        setError('');
      } catch (e) {
        if (!signal.aborted) setError(errorMessage(e));
      }
      // The scope is read from the address each render; its query string is what changes it.
    },
    [scopeKey],
  );
  useEffect(() => {
    setNotes(null);
    void load();
    return () => inFlight.current?.abort();
  }, [load]);
  // The list has shown, its requests answered: the editor's code comes next, while it is read.
  const listed = notes !== null;
  useEffect(() => {
    if (listed) prefetchCodeMirror();
  }, [listed]);
  /** The list again as far as it was scrolled (after a save, a move, a change elsewhere). */
  const refresh = useCallback(() => void load(Math.max(loaded.current, PAGE)), [load]);
  // Saves, moves and shares made elsewhere (another device, another person) show up as they happen.
  useLiveChanges(refresh, [refresh]);

  /** The next page, when the list scrolls near the end of what is loaded. */
  const loadMore = async () => {
    const controller = inFlight.current;
    if (loadingMore.current || controller === null || notes === null) return;
    loadingMore.current = true;
    try {
      const next = await page(notes.length, controller.signal);
      if (controller.signal.aborted) return;
      const seen = new Set(notes.map((n) => n.id));
      const all = [...notes, ...next.rows.filter((row) => !seen.has(row.id))];
      loaded.current = all.length;
      setNotes(all);
      setTotal(next.total);
      setMore(next.rows.length === PAGE);
    } catch (e) {
      if (!controller.signal.aborted) setError(errorMessage(e));
    } finally {
      if (inFlight.current === controller) loadingMore.current = false;
    }
  };
  const choose = (next: Scope) => {
    setDrawer(false);
    navigate(scopeHref(next));
  };
  const file = async (noteId: string, folderId: string | null) => {
    try {
      await fileNote(noteId, { folder_id: folderId });
      const where =
        folderId === null ? 'the top level' : `“${folders.find((f) => f.id === folderId)?.name ?? 'the folder'}”`;
      setUndoable(null);
      setFlash(`Moved to ${where}.`);
      refresh();
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const heading =
    scope.kind === 'archive'
      ? 'Archive'
      : scope.kind === 'shared'
        ? 'Shared with me'
        : scope.kind === 'folder'
          ? (folders.find((f) => f.id === scope.id)?.name ?? 'Folder')
          : scope.kind === 'root'
            ? 'Top level'
            : scope.kind === 'tag'
              ? `#${scope.name}`
              : 'Notes';

  useEffect(() => {
    if (query.trim() === '') return setResults(null);
    // A newer query (or leaving) cancels the request of the one before, so an older answer can
    // never land after a newer one.
    const controller = new AbortController();
    const timer = setTimeout(async () => {
      try {
        const found = await searchNotes(
          {
            q: asYouType(query),
            history: throughHistory ? 'true' : 'false',
            limit: SEARCH_LIMIT,
            ...scopeQuery(scope),
          },
          controller.signal,
        );
        setResults(found);
        setError('');
      } catch (e) {
        if (!controller.signal.aborted) setError(errorMessage(e));
      }
    }, 200);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [query, throughHistory, notes, scopeKey]);

  // New note opens an editor for a note that is not on the server yet: its first save creates it,
  // so leaving it untouched leaves nothing behind. Each New note is a fresh editor; the one whose
  // first save created a note stays on screen (same key) while the address takes the new id.
  const [fresh, setFresh] = useState(0);
  const [born, setBorn] = useState<string | null>(null);
  const create = () => {
    // Asked before anything changes: a Cancel leaves the open editor exactly as it was (issue 39,
    // defect 2: a new note's editor, after its first save, was remounted by a refused New note).
    // A yes clears the guard, so the navigation below does not ask again.
    if (!confirmLeave()) return;
    setFresh(fresh + 1);
    setBorn(null);
    navigate(`/notes/${NEW}${scopeKey}`);
  };
  const editorKey = noteId === NEW || (noteId !== null && noteId === born) ? `new-${fresh}` : noteId;

  return (
    <div class={`notes ${noteId ? 'has-open' : ''}`}>
      <Sidebar
        folders={folders}
        tags={tags}
        scope={scope}
        onScope={choose}
        onPicked={() => setDrawer(false)}
        onChanged={refresh}
        onDropNote={(id, to) => void file(id, to)}
        open={drawer}
      />
      <section class="list" aria-labelledby="notes-heading">
        <div class="list-head">
          <button
            type="button"
            class="secondary drawer-toggle"
            aria-expanded={drawer}
            aria-controls="sidebar"
            onClick={() => setDrawer(!drawer)}
          >
            Folders and tags
          </button>
          <h1 id="notes-heading">{heading}</h1>
          {total !== null && results === null && (
            <p class="muted count">
              {total === 1 ? '1 note' : `${total.toLocaleString()} notes`}
              {notes !== null && notes.length < total && `, ${notes.length.toLocaleString()} shown`}
            </p>
          )}
          <button type="button" onClick={create} aria-keyshortcuts="N">
            New note
          </button>
        </div>
        <div role="search">
          <label for="search" class="sr-only">
            Search notes
          </label>
          <input
            id="search"
            type="search"
            placeholder="Search notes"
            aria-keyshortcuts="/"
            maxLength={256}
            value={query}
            onInput={(e) => setQuery(e.currentTarget.value)}
          />
          <label class="check">
            <input
              type="checkbox"
              checked={throughHistory}
              onChange={(e) => setThroughHistory(e.currentTarget.checked)}
            />{' '}
            Include earlier versions
          </label>
        </div>
        {flash && (
          <p role="status" class="flash">
            {flash}
            {undoable !== null && (
              <>
                {' '}
                <button type="button" class="secondary" onClick={undoDelete}>
                  Undo
                </button>{' '}
                <button
                  type="button"
                  class="secondary"
                  aria-label="Dismiss"
                  onClick={() => {
                    setUndoable(null);
                    setFlash('');
                  }}
                >
                  ×
                </button>
              </>
            )}
          </p>
        )}
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        {results !== null ? (
          <div class="rows-box">
            <SearchResults results={results} current={noteId} />
          </div>
        ) : (
          <NoteList
            notes={notes}
            total={total}
            more={more}
            onNeedMore={() => void loadMore()}
            current={noteId}
            query={scopeKey}
            empty={
              scope.kind === 'all' ? (
                <NoNotesYet />
              ) : scope.kind === 'shared' ? (
                'No one has shared a note with you yet.'
              ) : (
                'No notes here.'
              )
            }
          />
        )}
      </section>
      <section class="open" aria-label="Note">
        {noteId === FIND ? (
          <NoteByTitle title={new URLSearchParams(search).get('title') ?? ''} scopeKey={scopeKey} />
        ) : noteId ? (
          <Editor
            key={editorKey}
            noteId={noteId}
            me={me}
            myName={myName}
            onChanged={refresh}
            folders={folders}
            folderId={scope.kind === 'folder' ? scope.id : null}
            newTitle={(noteId === NEW && new URLSearchParams(search).get('title')) || undefined}
            onCreated={(id) => {
              setBorn(id);
              refresh();
              navigate(`/notes/${id}${scopeKey}`, { replace: true, stay: true });
            }}
            onDeleted={(title, id) => {
              setUndoable({ id, title });
              setFlash(`“${title}” moved to the trash.`);
              refresh();
              navigate('/');
            }}
          />
        ) : (
          <div class="empty">
            <p>Select a note or create one with “New note”.</p>
            <p class="muted">
              Press <kbd>?</kbd> for keyboard shortcuts.
            </p>
          </div>
        )}
      </section>
    </div>
  );
}

/**
 * A list with no notes at all says what Vellum is and how to begin (issue #42, item 10): it is what
 * an account made without the welcome note (or one that deleted it) first sees.
 */
function NoNotesYet() {
  return (
    <>
      <p class="muted">No notes yet.</p>
      <p>
        Vellum keeps your notes in Markdown on your own server. Every save is a version you can compare and restore, and
        search finds any note as you type.
      </p>
      <p>
        Press <strong>New note</strong> to write your first one, or <a href="/account">import what you have</a>: a
        Vellum export, or a zip of Markdown files such as an Obsidian vault (Account, Export and import).
      </p>
    </>
  );
}

/** How long a plain confirmation ("Moved to …") stays before it goes by itself. */
const FLASH_MS = 5000;

/** At most this many search results are asked for; a full page says there may be more. */
const SEARCH_LIMIT = 50;

function SearchResults({ results, current }: { results: SearchResult[]; current: string | null }) {
  if (results.length === 0)
    return (
      <p class="muted" role="status">
        No notes match.
      </p>
    );
  return (
    <>
      {results.length >= SEARCH_LIMIT && (
        <p class="muted" role="status">
          The first {SEARCH_LIMIT} matches, best first. Add a word to narrow the search.
        </p>
      )}
      <ul class="rows" aria-label="Search results">
        {results.map((r) => (
          <li key={r.id}>
            <a
              href={
                r.version_id === undefined
                  ? `/notes/${r.id}`
                  : `/notes/${r.id}/history?version=${r.version_id}&q=${encodeURIComponent(matchedWords(r))}`
              }
              aria-current={r.id === current ? 'page' : undefined}
            >
              <span class="row-title">{r.title || 'Untitled'}</span>
              <span class="snippet">{highlight(r.snippet, r.highlights)}</span>
              {r.version !== undefined && <span class="muted">in version {r.version}</span>}
            </a>
          </li>
        ))}
      </ul>
    </>
  );
}

/** The words a hit matched (the highlighted parts of its snippet), for the version it opens to mark. */
function matchedWords(r: SearchResult): string {
  const words = new Set(r.highlights.map(([start = 0, end = 0]) => r.snippet.slice(start, end).toLowerCase()));
  return [...words].join(' ');
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
