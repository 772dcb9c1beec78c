/**
 * Tags from a note's Markdown (docs/api.md, "Folders, tags, pins, archive"): a `#` at the start of
 * the text or after whitespace, then 1 to 64 letters, digits (not only digits), `_`, `-` or `/`,
 * outside code spans and fenced code blocks, lower-cased.
 *
 * Hand-written rather than taken from a Markdown parser: it runs on every save of up to 1 MiB, so it
 * must stay linear on any input (a parser's nesting — 500,000 `>` — costs recursion and time this
 * needs none of), and it needs only where code starts and ends. Fences and code spans follow
 * CommonMark's rules (a fence closes with the same character, at least as long; a span closes with
 * a run of exactly as many backticks, within its paragraph); indented code blocks are text, as the
 * contract names only spans and fences.
 */

/** The longest tag, in code points. */
export const TAG_MAX_LENGTH = 64;
/** Distinct tags kept per note, in order of appearance: a note cannot make one save write 100,000 rows. */
export const TAGS_PER_NOTE_MAX = 1000;

/** One character of a tag, as a pattern (the `tag` filter of the routes' schemas says the same as an alternation). */
export const TAG_CHARACTER = '[\\p{L}\\p{M}\\p{N}_\\-/]';
const TAG = new RegExp(`(?<=^|\\s)#(${TAG_CHARACTER}+)`, 'gu');
const ONLY_DIGITS = /^\p{N}+$/u;
// Block-quote and list markers before a fence: fences inside them are still fences.
const FENCE = /^(?:[ \t]|>|[-*+][ \t]|\d{1,9}[.)][ \t])*(`{3,}|~{3,})(.*)$/;
const BACKTICKS = /`+/g;

/** The note's own tags, sorted and distinct (see `searchableTags` for what it can be found by). */
export function extractTags(content: string): string[] {
  if (!content.includes('#')) return [];
  const code = codeRanges(content);
  const found = new Set<string>();
  let r = 0;
  for (const match of content.matchAll(TAG)) {
    const at = match.index;
    while (r < code.length && code[r]![1] <= at) r += 1;
    if (r < code.length && code[r]![0] <= at) continue;
    const run = match[1]!;
    if (run.length > TAG_MAX_LENGTH && [...run].length > TAG_MAX_LENGTH) continue; // too long: not a tag at all
    if (ONLY_DIGITS.test(run)) continue;
    found.add(run.toLowerCase());
    if (found.size === TAGS_PER_NOTE_MAX) break;
  }
  return [...found].sort();
}

/** Each tag and its parents: `#a/b/c` is found by `a/b/c`, `a/b` and `a`. */
export function searchableTags(tags: readonly string[]): string[] {
  const all = new Set<string>();
  for (const tag of tags) {
    all.add(tag);
    for (let slash = tag.indexOf('/'); slash > 0; slash = tag.indexOf('/', slash + 1)) {
      const parent = tag.slice(0, slash);
      if (!parent.endsWith('/') && !ONLY_DIGITS.test(parent)) all.add(parent);
    }
  }
  return [...all].sort();
}

/** A tag as a filter names it: `#Work` and `work` are the same tag. */
export function normalizeTag(tag: string): string {
  return (tag.startsWith('#') ? tag.slice(1) : tag).toLowerCase();
}

/** `notes.tags`: a tag never holds whitespace, so a space joins them. */
export function encodeTags(tags: readonly string[]): string {
  return tags.join(' ');
}

export function decodeTags(stored: string | null): string[] {
  return stored === null || stored === '' ? [] : stored.split(' ');
}

/** [start, end) ranges of fenced code blocks and code spans, in order. */
function codeRanges(text: string): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  let paragraphStart = -1;
  let fence: { char: string; length: number; start: number } | undefined;
  let lineStart = 0;
  while (lineStart <= text.length) {
    let lineEnd = text.indexOf('\n', lineStart);
    if (lineEnd === -1) lineEnd = text.length;
    const line = text.slice(lineStart, lineEnd);
    const fenceLike = line.includes('```') || line.includes('~~~');
    if (fence !== undefined) {
      const close = fenceLike ? FENCE.exec(line) : null;
      if (
        close !== null &&
        close[1]![0] === fence.char &&
        close[1]!.length >= fence.length &&
        close[2]!.trim() === ''
      ) {
        ranges.push([fence.start, lineEnd]);
        fence = undefined;
      }
    } else {
      const open = fenceLike ? FENCE.exec(line) : null;
      // A backtick fence's info string holds no backtick (else the line is a code span).
      const opens = open !== null && !(open[1]![0] === '`' && open[2]!.includes('`'));
      if (opens || line.trim() === '') {
        if (paragraphStart >= 0) codeSpans(text, paragraphStart, lineStart, ranges);
        paragraphStart = -1;
        if (opens) fence = { char: open[1]![0]!, length: open[1]!.length, start: lineStart };
      } else if (paragraphStart < 0) {
        paragraphStart = lineStart;
      }
    }
    lineStart = lineEnd + 1;
  }
  if (fence !== undefined)
    ranges.push([fence.start, text.length]); // an unclosed fence runs to the end
  else if (paragraphStart >= 0) codeSpans(text, paragraphStart, text.length, ranges);
  return ranges.sort((a, b) => a[0] - b[0]);
}

/**
 * Code spans of one paragraph: a run of n backticks opens a span that the next run of exactly n
 * closes; without one it is literal text. Each length keeps a cursor into its runs, so a paragraph
 * of a million unmatched runs still takes one pass.
 */
function codeSpans(text: string, start: number, end: number, ranges: Array<[number, number]>): void {
  const runs: Array<{ at: number; length: number }> = [];
  BACKTICKS.lastIndex = start;
  for (let m = BACKTICKS.exec(text); m !== null && m.index < end; m = BACKTICKS.exec(text)) {
    let at = m.index;
    let length = m[0].length;
    if (at > 0 && text[at - 1] === '\\') {
      at += 1;
      length -= 1;
    } // an escaped backtick is text
    if (length > 0) runs.push({ at, length });
  }
  const byLength = new Map<number, number[]>();
  runs.forEach((run, i) => {
    let list = byLength.get(run.length);
    if (list === undefined) byLength.set(run.length, (list = []));
    list.push(i);
  });
  const cursor = new Map<number, number>();
  for (let i = 0; i < runs.length; i += 1) {
    const open = runs[i]!;
    const list = byLength.get(open.length)!;
    let c = cursor.get(open.length) ?? 0;
    while (c < list.length && list[c]! <= i) c += 1;
    cursor.set(open.length, c);
    if (c === list.length) continue; // never closed: literal backticks
    const closeIndex = list[c]!;
    const close = runs[closeIndex]!;
    ranges.push([open.at, close.at + close.length]);
    i = closeIndex;
  }
}
