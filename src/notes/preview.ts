import type { Db } from '../db/schema.js';
import { markupRanges } from '../search/markup.js';
import { versionHeads } from './notes.repository.js';

/** Bytes of a note's text read for its preview: enough for a line after markup and a repeated title. */
const PREVIEW_SOURCE_BYTES = 1024;
/** Characters of a preview: a line of the notes list, with room to spare on wide screens. */
const PREVIEW_CHARS = 160;

/** Previews kept, by version id; a version's text never changes, so an entry never goes stale. */
const CACHE_MAX = 10_000;
const cache = new Map<string, string>();

/**
 * The previews of list rows (each with its current version's id and its title), in their order.
 * Known ones come from the cache; the rest read their text's first bytes (repository.versionHeads).
 */
export async function previewsOf(
  db: Db,
  rows: ReadonlyArray<{ version_id: string; title: string }>,
): Promise<string[]> {
  const missing = rows.filter((row) => !cache.has(row.version_id)).map((row) => row.version_id);
  if (missing.length > 0) {
    const heads = await versionHeads(db, [...new Set(missing)], PREVIEW_SOURCE_BYTES);
    for (const row of rows) {
      const head = heads.get(row.version_id);
      if (head === undefined) continue;
      cache.set(row.version_id, previewOf(row.title, head));
      // The oldest entry goes first (a Map keeps insertion order).
      if (cache.size > CACHE_MAX) cache.delete(cache.keys().next().value!);
    }
  }
  return rows.map((row) => cache.get(row.version_id) ?? '');
}

/**
 * A note list row's one-line preview: the start of its text as plain text (Markdown marks and HTML
 * tags left out, white space collapsed), without a first line (or heading) that only repeats the title.
 */
export function previewOf(title: string, head: string): string {
  const first = /^[ \t]{0,3}(?:#{1,6}[ \t]+)?([^\n]*)(?:\n|$)/.exec(head)!;
  if (title.trim() !== '' && first[1]!.trim() === title.trim()) head = head.slice(first[0].length);
  const text = plainText(head);
  // Cut on a code point, never inside a surrogate pair.
  const chars = Array.from(text.slice(0, PREVIEW_CHARS * 2 + 2));
  return chars.length > PREVIEW_CHARS ? `${chars.slice(0, PREVIEW_CHARS).join('').trimEnd()}…` : text;
}

function plainText(markdown: string): string {
  let text = '';
  let at = 0;
  for (const [start, end] of markupRanges(markdown, 0, markdown.length)) {
    text += markdown.slice(at, start);
    at = end;
  }
  text += markdown.slice(at);
  return text
    .replace(/<\/?[a-zA-Z][^<>\n]{0,200}>/g, ' ')
    .replace(/[\s\p{Cc}]+/gu, ' ')
    .trim();
}
