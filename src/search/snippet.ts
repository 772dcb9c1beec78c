import type { Clause } from './query.js';
import { markupRanges } from './markup.js';
import { scanTerms } from './text.js';

export const SNIPPET_LENGTH = 200;
/** Characters of context shown before the first highlighted word when the text is cut. */
const LEAD = 50;
/**
 * Bounds on the work of one snippet (measured before them: 100–160 ms per 1 MiB result before). The scan
 * stops at the first place that shows every wanted clause; these bound the rest: a note where the
 * words are rare, absent (found for its title), or repeated thousands of times.
 */
const MAX_MATCHES = 500;
const SCAN_CHARS = 256 * 1024;
/**
 * Characters scanned for the snippets of one page together: a page of 100 notes of 1 MiB where the
 * words are not in the first 256 K would otherwise scan 25 M characters. Past it, a result shows
 * the start of its text (as a note found by its title does).
 */
export const PAGE_SCAN_CHARS = 1024 * 1024;

/** What is left of a page's scanning budget; makeSnippet draws on it. */
export interface ScanBudget {
  chars: number;
}

/** How often (in characters scanned) the best place so far is looked at, once every clause was seen. */
const CHECK_EVERY = 1024;

interface Match {
  clause: number;
  /** Index of its first term in the text's terms: matches are ranked in this order. */
  first: number;
  /** The words of the match (one per term of a phrase), as [start, end) in the text. */
  words: Array<[number, number]>;
}

function termMatches(clause: Clause, k: number, term: string): boolean {
  const wanted = clause.terms[k]!;
  return k === clause.terms.length - 1 && clause.prefix ? term.startsWith(wanted) : term === wanted;
}

/** Where the query's wanted clauses occur in `text`, ordered by where they start, as the engines find them. */
function findMatches(text: string, clauses: Clause[], budget: ScanBudget): Match[] {
  const matches: Match[] = [];
  const longest = Math.max(...clauses.map((c) => c.terms.length));
  // The last `longest` terms, as a ring: a clause is recognised at its last term.
  const terms: string[] = new Array<string>(longest);
  const spans: Array<[number, number]> = new Array<[number, number]>(longest);
  const found = new Set<number>();
  let index = -1;
  let checkAt = -1;
  const scanned = Math.min(text.length, SCAN_CHARS, Math.max(0, budget.chars));
  let reached = scanned;
  scanTerms(scanned < text.length ? text.slice(0, scanned) : text, (term, start, end) => {
    index += 1;
    terms[index % longest] = term;
    spans[index % longest] = [start, end];
    for (let c = 0; c < clauses.length; c += 1) {
      const clause = clauses[c]!;
      const n = clause.terms.length;
      if (n > index + 1) continue;
      let k = n - 1;
      while (k >= 0 && termMatches(clause, k, terms[(index - (n - 1 - k)) % longest]!)) k -= 1;
      if (k >= 0) continue;
      const words: Array<[number, number]> = [];
      for (let j = index - n + 1; j <= index; j += 1) words.push(spans[j % longest]!);
      matches.push({ clause: c, first: index - n + 1, words });
      found.add(c);
    }
    reached = end;
    if (matches.length >= MAX_MATCHES) return false;
    // Every clause seen: once the best place so far shows them all and the scan is past what could
    // still join it, nothing later can be better (the earliest such place wins).
    if (found.size === clauses.length && start >= checkAt) {
      const best = bestMatch(sorted(matches), clauses.length);
      if (best.score === clauses.length && start > best.anchor + SNIPPET_LENGTH) return false;
      checkAt = start + CHECK_EVERY;
    }
    reached = scanned;
    return true;
  });
  budget.chars -= reached;
  return sorted(matches);
}

/** In the order the matches start (then by clause), as a scan from each term would list them. */
function sorted(matches: Match[]): Match[] {
  return matches.sort((a, b) => a.first - b.first || a.clause - b.clause);
}

/** The match where the most different clauses occur close together, the earliest on a tie. */
function bestMatch(matches: Match[], _clauses: number): { index: number; score: number; anchor: number } {
  let best = 0;
  let bestScore = -1;
  for (let i = 0; i < matches.length; i += 1) {
    const start = matches[i]!.words[0]![0];
    const seen = new Set<number>();
    for (let j = i; j < matches.length && matches[j]!.words.at(-1)![1] - start <= SNIPPET_LENGTH - LEAD; j += 1)
      seen.add(matches[j]!.clause);
    if (seen.size > bestScore) {
      best = i;
      bestScore = seen.size;
    }
  }
  return { index: best, score: bestScore, anchor: matches[best]?.words[0]?.[0] ?? 0 };
}

export interface Snippet {
  snippet: string;
  highlights: Array<[number, number]>;
}

/**
 * At most 200 characters of plain text around the best match (the place where the most different
 * query clauses occur close together, earliest on a tie), with the matched words' offsets in it.
 */
export function makeSnippet(
  text: string,
  clauses: Clause[],
  budget: ScanBudget = { chars: SCAN_CHARS },
): Snippet | undefined {
  if (clauses.length === 0) return undefined;
  const matches = findMatches(text, clauses, budget);
  if (matches.length === 0) return undefined;
  const { anchor } = bestMatch(matches, clauses.length);
  return cut(
    text,
    anchor,
    matches.flatMap((m) => m.words),
  );
}

/** The start of the text as plain text, without highlights (a note found for what it lacks). */
export function leadSnippet(text: string): Snippet {
  return cut(text, 0, []);
}

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;
/** Runs of whitespace and control characters (NUL included) become one space: a snippet is one line. */
const BLANKS = /[\s\p{Cc}]+/uy;
const VISIBLE = /[^\s\p{Cc}]/u;
/** How far past its start a snippet's text is looked at for Markdown syntax (beyond, it is shown as is). */
const MARKUP_WINDOW = SNIPPET_LENGTH * 4;

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
  // Markdown syntax is left out, so the snippet reads as the rendered note does.
  const markup = markupRanges(text, start, Math.min(text.length, start + MARKUP_WINDOW));
  let next = 0;
  while (i < text.length) {
    while (next < markup.length && markup[next]![1] <= i) next += 1;
    if (next < markup.length && markup[next]![0] <= i) {
      i = markup[next]![1];
      continue;
    }
    // A run of blanks at once: a note may hold a megabyte of them.
    BLANKS.lastIndex = i;
    if (BLANKS.test(text)) {
      pendingSpace = snippet !== '' && snippet !== '…';
      i = BLANKS.lastIndex;
      continue;
    }
    const ch = text[i]!;
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
