import { defaultRangeExtractor } from '@tanstack/virtual-core';
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import type { NoteRow, SharedNoteRow } from './api';
import { NOTE_DRAG_TYPE } from './sidebar';
import { useVirtualizer } from './virtual';
import { formatTime } from '../app/format';

/** A row of the list: the caller's own note, or (in "Shared with me") whose it is and what they may do with it. */
export type SharedRow = NoteRow | SharedNoteRow;

/** Rows from the end of what is loaded at which the next page is asked for. */
const AHEAD = 30;

/**
 * The notes list, virtualised: only the rows near the visible part of its own scrolling box are
 * on the page (10,000 notes scroll as smoothly as 10), and scrolling near the end of what is loaded
 * asks for the next page. Rows not loaded yet hold their place (the total is known), so the
 * scroll bar tells the list's true length.
 */
export function NoteList({
  notes,
  total,
  more,
  onNeedMore,
  current,
  query,
  empty,
}: {
  notes: SharedRow[] | null;
  total: number | null;
  more: boolean;
  onNeedMore: () => void;
  current: string | null;
  query: string;
  /** What an empty list says: a line, or (a new account's notes) more. */
  empty: ComponentChildren;
}) {
  const box = useRef<HTMLDivElement>(null);
  const rows = notes ?? [];
  const count = more ? Math.max(rows.length + 1, total ?? 0) : rows.length;
  const open = rows.findIndex((n) => n.id === current);
  const virtual = useVirtualizer({
    count,
    getScrollElement: () => box.current,
    estimateSize: () => 76,
    overscan: 8,
    getItemKey: (i) => rows[i]?.id ?? `slot-${i}`,
    // The open note's row stays on the page when scrolled away, so focus on it is never lost.
    rangeExtractor: (range) => {
      const indexes = defaultRangeExtractor(range);
      return open < 0 || indexes.includes(open) ? indexes : [...indexes, open].sort((a, b) => a - b);
    },
  });
  const items = virtual.getVirtualItems();
  const last = items.at(-1)?.index ?? -1;
  useEffect(() => {
    if (more && notes !== null && last >= rows.length - AHEAD) onNeedMore();
  }, [more, last, rows.length]);

  if (notes === null)
    return (
      <p class="muted" role="status">
        Loading notes…
      </p>
    );
  if (notes.length === 0)
    return typeof empty === 'string' ? <p class="muted">{empty}</p> : <div class="empty-list">{empty}</div>;
  return (
    <div class="rows-box" ref={box}>
      <ul
        class="rows virtual"
        aria-label="Notes, pinned first, then most recent"
        style={{ height: `${virtual.getTotalSize()}px` }}
      >
        {items.map((item) => {
          const note = rows[item.index];
          return (
            <li
              key={item.key}
              data-index={item.index}
              ref={virtual.measureElement}
              aria-setsize={count}
              aria-posinset={item.index + 1}
              style={{ transform: `translateY(${item.start}px)` }}
              draggable={note !== undefined}
              onDragStart={(e) => note && e.dataTransfer?.setData(NOTE_DRAG_TYPE, note.id)}
            >
              {note === undefined ? (
                <p class="muted placeholder" aria-busy="true">
                  Loading…
                </p>
              ) : (
                <Row note={note} current={current} query={query} />
              )}
            </li>
          );
        })}
      </ul>
    </div>
  );
}

function Row({ note, current, query }: { note: SharedRow; current: string | null; query: string }) {
  const title = note.title || 'Untitled';
  return (
    <>
      <a href={`/notes/${note.id}${query}`} aria-current={note.id === current ? 'page' : undefined}>
        <span class="row-title">
          {note.pinned && (
            <span class="pin" title="Pinned">
              <span class="sr-only">Pinned: </span>
            </span>
          )}
          {title}
        </span>
        {note.preview !== '' && <span class="preview-line">{note.preview}</span>}
        <time dateTime={note.updated_at}>{formatTime(note.updated_at)}</time>
        {'owner_username' in note && (
          <span class="meta">
            {note.owner_username} · {note.role === 'editor' ? 'can edit' : 'can view'}
          </span>
        )}
      </a>
      {note.tags.length > 0 && (
        <ul class="chips" aria-label={`Tags of ${title}`}>
          {note.tags.map((tag) => (
            <li key={tag}>
              <a class="chip" href={`/notes/${note.id}?tag=${encodeURIComponent(tag)}`}>
                #{tag}
              </a>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
