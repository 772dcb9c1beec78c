/**
 * How text becomes search terms, the same for SQLite and PostgreSQL: the application folds and
 * splits, and both engines only ever see the resulting terms (SQLite's `ascii` tokenizer splits
 * them on spaces again, PostgreSQL gets a ready tsvector). Neither engine's own notion of a word,
 * case or accent is involved, so both find exactly the same notes.
 */

/** Words: letters, digits and the combining marks that belong to them. */
const RUN = /[\p{L}\p{N}\p{M}]+/gu;
/** After folding, a run may still fall apart (½ becomes 1⁄2): terms are runs of letters and digits. */
const PIECE = /[\p{L}\p{N}]+/gu;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the whole ASCII range, control characters included
const ASCII = /^[\x00-\x7f]*$/;
const MARKS = /\p{M}+/gu;

/** Longer terms (hashes, base64, runs without spaces) are not indexed, nor searched for. */
export const MAX_TERM_LENGTH = 100;

/** Case and diacritics folded: compatibility decomposition, combining marks dropped, lower case. */
export function fold(text: string): string {
  if (ASCII.test(text)) return text.toLowerCase();
  // Lower-casing can produce combining marks (İ becomes i + U+0307), so marks are dropped after it;
  // and decomposing can produce capitals (𝒪 and ℍ have no lower case, but become O and H), so it
  // lower-cases again: otherwise PostgreSQL stored `O` while SQLite's tokenizer folded it to `o`.
  return text.toLowerCase().normalize('NFKD').toLowerCase().replace(MARKS, '');
}

export interface Token {
  term: string;
  /** [start, end) of the word in the original text, in JavaScript string indices. */
  start: number;
  end: number;
}

/** The terms of `text` in order, each with where its word is in the original text. */
export function* tokenize(text: string): Generator<Token> {
  for (const run of text.matchAll(RUN)) {
    const start = run.index;
    const end = start + run[0].length;
    if (ASCII.test(run[0])) {
      // The common case: an ASCII run is already one term of letters and digits.
      if (run[0].length <= MAX_TERM_LENGTH) yield { term: run[0].toLowerCase(), start, end };
      continue;
    }
    const folded = fold(run[0]);
    for (const piece of folded.matchAll(PIECE)) {
      if (piece[0].length <= MAX_TERM_LENGTH) yield { term: piece[0], start, end };
    }
  }
}

/**
 * The same terms as tokenize(), handed to `visit` until it returns false, at a fraction of the cost
 * (snippets scan up to 256 K characters per result): no generator or token objects, and each
 * distinct non-ASCII word folded once (normalising word by word was most of the time on such text).
 */
export function scanTerms(text: string, visit: (term: string, start: number, end: number) => boolean): void {
  const run = new RegExp(RUN.source, 'gu');
  const asciiText = ASCII.test(text);
  const folds = new Map<string, string[]>();
  for (let m = run.exec(text); m !== null; m = run.exec(text)) {
    const word = m[0];
    const start = m.index;
    const end = start + word.length;
    if (asciiText || ASCII.test(word)) {
      if (word.length <= MAX_TERM_LENGTH && !visit(word.toLowerCase(), start, end)) return;
      continue;
    }
    let pieces = folds.get(word);
    if (pieces === undefined) {
      pieces = [];
      for (const piece of fold(word).matchAll(PIECE)) if (piece[0].length <= MAX_TERM_LENGTH) pieces.push(piece[0]);
      // Bounded: a text of only distinct words gains nothing from the cache.
      if (folds.size < FOLD_CACHE_SIZE) folds.set(word, pieces);
    }
    for (const piece of pieces) if (!visit(piece, start, end)) return;
  }
}

const FOLD_CACHE_SIZE = 10_000;

/**
 * The UTF-8 bytes of distinct terms one document may have. PostgreSQL refuses a tsvector whose
 * lexemes pass 1 MiB; past this budget a document's new terms are left out (words seen before
 * still count), on both databases alike. Only pathological 1 MiB contents get near it.
 */
const DISTINCT_TERM_BYTES = 900_000;

const ASCII_TERM = /[a-z0-9]+/g;

/** The indexed terms of a document, in order, within the distinct-term budget shared by title and content. */
export function documentTerms(title: string, content: string): { title: string[]; body: string[] } {
  // Most notes are ASCII: the same terms tokenize() gives, found in one pass, and a document this
  // size cannot reach the budget (ASCII folds to no more characters than it has).
  if (title.length + content.length <= DISTINCT_TERM_BYTES && ASCII.test(title) && ASCII.test(content)) {
    const terms = (text: string) => {
      const found = text.toLowerCase().match(ASCII_TERM) ?? [];
      return found.some((term) => term.length > MAX_TERM_LENGTH)
        ? found.filter((term) => term.length <= MAX_TERM_LENGTH)
        : found;
    };
    return { title: terms(title), body: terms(content) };
  }
  const seen = new Set<string>();
  let budget = DISTINCT_TERM_BYTES;
  const take = (text: string): string[] => {
    const terms: string[] = [];
    for (const { term } of tokenize(text)) {
      if (!seen.has(term)) {
        const bytes = Buffer.byteLength(term, 'utf8');
        if (bytes > budget) continue;
        budget -= bytes;
        seen.add(term);
      }
      terms.push(term);
    }
    return terms;
  };
  return { title: take(title), body: take(content) };
}
