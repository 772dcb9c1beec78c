import { markupRanges } from '../search/markup.js';

/** Bytes of a note's text read for its preview: enough for a line after markup and a repeated title. */
export const PREVIEW_SOURCE_BYTES = 1024;
/** Characters of a preview: a line of the notes list, with room to spare on wide screens. */
const PREVIEW_CHARS = 160;

/**
 * A note list row's one-line preview: the start of its text as plain text (Markdown marks and HTML
 * tags left out, white space collapsed), without a first line (or heading) that only repeats the title.
 */
export function previewOf(title: string, head: string): string {
  const first = /^[ \t]{0,3}(?:#{1,6}[ \t]+)?([^\n]*)(?:\n|$)/.exec(head)!;
  if (title.trim() !== '' && first[1]!.trim() === title.trim()) head = head.slice(first[0].length);
  let text = '';
  let at = 0;
  for (const [start, end] of markupRanges(head, 0, head.length)) {
    text += head.slice(at, start);
    at = end;
  }
  text += head.slice(at);
  text = text.replace(/<\/?[a-zA-Z][^<>\n]{0,200}>/g, ' ').replace(/[\s\p{Cc}]+/gu, ' ').trim();
  // Cut on a code point, never inside a surrogate pair.
  const chars = Array.from(text);
  return chars.length > PREVIEW_CHARS ? `${chars.slice(0, PREVIEW_CHARS).join('').trimEnd()}…` : text;
}
