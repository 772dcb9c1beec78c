/**
 * Where Markdown syntax sits in a stretch of text, so that a snippet can leave it out and read as
 * plain text (docs/api.md, "Search": the snippet is plain text): heading, quote, list and task markers at the
 * start of a line; the brackets and target of links and images (their text stays); code,
 * emphasis and strike-through marks at the edge of a word. A `_` or `*` inside a word
 * (`snake_case`, `2*3`) or standing alone (`a * b`) is text, as is `#tag`.
 */

/** Heading, quote, list (with a task box) markers: up to three spaces in, as CommonMark allows. */
const LINE_MARKER = /(^|\n)([ \t]{0,3})(#{1,6}[ \t]+|(?:>[ \t]?)+|(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?)/g;
/** `[text](target "title")` and `![alt](target)`: the text is kept, the rest is syntax. */
const LINK = /(!?\[)([^\]\n]{0,500})(\]\([^)\s]{0,2000}(?:[ \t]+"[^"\n]{0,500}")?\))/g;
const MARKS = /`+|~~|\*+|_+/g;
const WORD = /[\p{L}\p{N}]/u;
const BLANK = /\s/u;

/** [start, end) ranges of `text` within [from, to), sorted and not overlapping. */
export function markupRanges(text: string, from: number, to: number): Array<[number, number]> {
  const slice = text.slice(from, to);
  const ranges: Array<[number, number]> = [];
  const lineStart = from === 0 || text[from - 1] === '\n';
  for (const m of slice.matchAll(LINE_MARKER)) {
    if (m.index === 0 && m[1] === '' && !lineStart) continue; // the stretch begins mid-line
    const start = m.index + m[1]!.length + m[2]!.length;
    ranges.push([start, start + m[3]!.length]);
  }
  for (const m of slice.matchAll(LINK)) {
    ranges.push([m.index, m.index + m[1]!.length]);
    const close = m.index + m[1]!.length + m[2]!.length;
    ranges.push([close, close + m[3]!.length]);
  }
  for (const m of slice.matchAll(MARKS)) {
    const before = m.index === 0 ? '' : slice[m.index - 1]!;
    const after = slice[m.index + m[0].length] ?? '';
    const inWord = WORD.test(before) && WORD.test(after);
    const alone = (before === '' || BLANK.test(before)) && (after === '' || BLANK.test(after));
    if (m[0][0] === '`' || (!inWord && !alone)) ranges.push([m.index, m.index + m[0].length]);
  }
  ranges.sort((a, b) => a[0] - b[0]);
  const merged: Array<[number, number]> = [];
  for (const [start, end] of ranges) {
    const last = merged.at(-1);
    if (last !== undefined && start <= last[1]) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  return merged.map(([start, end]) => [start + from, end + from]);
}
