import type { Clause } from './query.js';
import { tokenize, type Token } from './text.js';

export const SNIPPET_LENGTH = 200;
/** Characters of context shown before the first highlighted word when the text is cut. */
const LEAD = 50;
/** Enough to find the best place in any real note without tokenizing a whole 1 MiB one per result. */
const MAX_MATCHES = 500;
const SCAN_CHARS = 256 * 1024;

export interface Snippet {
  snippet: string;
  highlights: Array<[number, number]>;
}

interface Match {
  clause: number;
  /** The words of the match (one per term of a phrase), as [start, end) in the text. */
  words: Array<[number, number]>;
}

function termMatches(clause: Clause, k: number, term: string): boolean {
  const wanted = clause.terms[k]!;
  return k === clause.terms.length - 1 && clause.prefix ? term.startsWith(wanted) : term === wanted;
}

/** Where the query's wanted clauses occur in `text`, in order, as the engines would find them. */
function findMatches(text: string, clauses: Clause[]): Match[] {
  const matches: Match[] = [];
  const longest = Math.max(...clauses.map((c) => c.terms.length));
  const window: Token[] = [];
  // Tries every clause at window[0]; a phrase needs its following tokens in the window already.
  const scan = () => {
    clauses.forEach((clause, index) => {
      if (clause.terms.length > window.length) return;
      for (let k = 0; k < clause.terms.length; k += 1) if (!termMatches(clause, k, window[k]!.term)) return;
      matches.push({ clause: index, words: window.slice(0, clause.terms.length).map((t) => [t.start, t.end]) });
    });
  };
  for (const token of tokenize(text.length > SCAN_CHARS ? text.slice(0, SCAN_CHARS) : text)) {
    window.push(token);
    if (window.length < longest) continue;
    scan();
    window.shift();
    if (matches.length >= MAX_MATCHES) return matches;
  }
  while (window.length > 0) {
    scan();
    window.shift();
  }
  return matches;
}

/**
 * At most 200 characters of plain text around the best match (the place where the most different
 * query clauses occur close together, earliest on a tie), with the matched words' offsets in it.
 */
export function makeSnippet(text: string, clauses: Clause[]): Snippet | undefined {
  if (clauses.length === 0) return undefined;
  const matches = findMatches(text, clauses);
  if (matches.length === 0) return undefined;
  let best = 0;
  let bestScore = -1;
  for (let i = 0; i < matches.length; i += 1) {
    const start = matches[i]!.words[0]![0];
    const seen = new Set<number>();
    for (let j = i; j < matches.length && matches[j]!.words.at(-1)![1] - start <= SNIPPET_LENGTH - LEAD; j += 1) seen.add(matches[j]!.clause);
    if (seen.size > bestScore) {
      best = i;
      bestScore = seen.size;
    }
  }
  const anchor = matches[best]!.words[0]![0];
  return cut(text, anchor, matches.flatMap((m) => m.words));
}

/** The start of the text as plain text, without highlights (a note found for what it lacks). */
export function leadSnippet(text: string): Snippet {
  return cut(text, 0, []);
}

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;
/** Runs of whitespace and control characters (NUL included) become one space: a snippet is one line. */
const BLANK = /[\s\p{Cc}]/u;
const VISIBLE = /[^\s\p{Cc}]/u;

function cut(text: string, anchor: number, words: Array<[number, number]>): Snippet {
  // Start a little before the anchor, at a word boundary when there is one.
  let start = Math.max(0, anchor - LEAD);
  if (start > 0) {
    const space = text.slice(start, anchor).search(/\s/u);
    if (space !== -1) start += space + 1;
    if (isLow(text.charCodeAt(start))) start += 1;
  }
  let snippet = start > 0 ? '…' : '';
  /** Offset in the snippet of each character of the text that made it in. */
  const at = new Map<number, number>();
  let pendingSpace = false;
  let i = start;
  while (i < text.length) {
    const ch = text[i]!;
    if (BLANK.test(ch)) {
      pendingSpace = snippet !== '' && snippet !== '…';
      i += 1;
      continue;
    }
    const width = isHigh(ch.charCodeAt(0)) && isLow(text.charCodeAt(i + 1)) ? 2 : 1;
    const need = width + (pendingSpace ? 1 : 0);
    // Keep room for the closing ellipsis unless this is the very end.
    const reserve = i + width < text.length ? 1 : 0;
    if (snippet.length + need + reserve > SNIPPET_LENGTH) break;
    if (pendingSpace) snippet += ' ';
    pendingSpace = false;
    for (let k = 0; k < width; k += 1) at.set(i + k, snippet.length + k);
    snippet += text.slice(i, i + width);
    i += width;
  }
  const end = i;
  if (end < text.length && VISIBLE.test(text.slice(end))) snippet += '…';
  const seen = new Set<number>();
  const highlights: Array<[number, number]> = [];
  for (const [from, to] of words) {
    const a = at.get(from);
    const b = at.get(to - 1);
    if (a === undefined || b === undefined || seen.has(a)) continue;
    seen.add(a);
    highlights.push([a, b + 1]);
  }
  highlights.sort((x, y) => x[0] - y[0]);
  return { snippet, highlights };
}
