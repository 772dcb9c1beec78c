import { useEffect, useRef, useState } from 'preact/hooks';
import { listNotes, searchNotes } from '../notes/api';
import { asYouType } from '../notes/search-query';
import { navigate } from './router';

interface Hit {
  id: string;
  title: string;
}
const LIMIT = 8;

/**
 * The quick switcher (#42): Ctrl+K or ⌘K anywhere, the text included, opens a box that finds a
 * note by what it says as you type (the most recent notes before any typing); Enter opens the
 * first, Tab and the arrow keys reach the others, Escape closes.
 */
export function QuickSwitcher() {
  const dialog = useRef<HTMLDialogElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const [query, setQuery] = useState('');
  const [hits, setHits] = useState<Hit[]>([]);
  const [open, setOpen] = useState(false);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!(event.ctrlKey || event.metaKey) || event.altKey || event.shiftKey || event.key.toLowerCase() !== 'k')
        return;
      event.preventDefault();
      setQuery('');
      setOpen(true);
      dialog.current?.showModal();
      input.current?.focus();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  useEffect(() => {
    if (!open) return;
    const controller = new AbortController();
    const q = query.trim();
    (q === ''
      ? listNotes({ limit: LIMIT }, controller.signal).then(({ rows }) => rows)
      : searchNotes({ q: asYouType(q), limit: LIMIT }, controller.signal)
    ).then(
      (rows: Hit[]) => setHits(rows.map((r) => ({ id: r.id, title: r.title }))),
      () => undefined,
    );
    return () => controller.abort();
  }, [query, open]);

  const go = (id: string) => {
    dialog.current?.close();
    navigate(`/notes/${id}`);
  };
  const onListKey = (event: KeyboardEvent) => {
    const links = [...(dialog.current?.querySelectorAll<HTMLAnchorElement>('.switcher-hits a') ?? [])];
    const at = links.indexOf(document.activeElement as HTMLAnchorElement);
    if (event.key === 'ArrowDown') {
      event.preventDefault();
      links[Math.min(links.length - 1, at + 1)]?.focus();
    } else if (event.key === 'ArrowUp') {
      event.preventDefault();
      if (at <= 0) input.current?.focus();
      else links[at - 1]?.focus();
    }
  };

  return (
    <dialog
      ref={dialog}
      class="switcher"
      aria-labelledby="switcher-title"
      onClose={() => setOpen(false)}
      onKeyDown={onListKey}
    >
      <h2 id="switcher-title">Go to a note</h2>
      <input
        ref={input}
        type="search"
        aria-label="Note to open"
        placeholder="Type a few words of its title or text"
        value={query}
        onInput={(e) => setQuery(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && hits[0] !== undefined) {
            e.preventDefault();
            go(hits[0].id);
          }
        }}
      />
      <ul class="switcher-hits" aria-label={query.trim() === '' ? 'Recent notes' : 'Matching notes'}>
        {hits.map((hit) => (
          <li key={hit.id}>
            <a
              href={`/notes/${hit.id}`}
              onClick={(e) => {
                e.preventDefault();
                go(hit.id);
              }}
            >
              {hit.title || 'Untitled'}
            </a>
          </li>
        ))}
      </ul>
      {open && hits.length === 0 && <p class="muted">No notes match.</p>}
      <p class="muted">Enter opens the first; Escape closes.</p>
    </dialog>
  );
}
