import { TAG_CHARACTER, TAG_MAX_LENGTH } from '../tags/extract.js';
import { fold, MAX_TERM_LENGTH } from './text.js';

/**
 * The query language of GET /notes/search, parsed here and never handed to an engine as typed:
 * words (all must match), "a phrase" (those words in order), -word or -"a phrase" (must not match),
 * word* (a word starting so). Every string parses; what carries no searchable word is dropped.
 */

export interface Clause {
  /** Folded terms; more than one means a phrase. */
  terms: string[];
  /** The last term matches as a prefix. */
  prefix: boolean;
}

export interface SearchQuery {
  include: Clause[];
  exclude: Clause[];
  /** True when the query can match nothing (a required word longer than any indexed term). */
  impossible: boolean;
  /** `tag:name` (the note must have it, or a tag below it) and `-tag:name` (must not), lower case. */
  tags: string[];
  notTags: string[];
}

/**
 * Work limits (docs/api.md, "Search"): an engine's cost grows with every clause and with every word of a
 * phrase (each is one more walk of a posting list: `"x x … x"` of 120 words took 9.8 s in FTS5 over
 * 20 notes of 1 MB). Repeats are dropped by the parser, which changes no result. Past these, a
 * query is refused (400) rather than cut: searching a shorter phrase or fewer words would find
 * notes the query does not describe. No real search comes near them.
 */
export const MAX_CLAUSES = 32;
export const MAX_PHRASE_TERMS = 32;

/** Why the query is over a work limit, as a 400's detail; undefined when it is within them. */
export function limitError(query: SearchQuery): string | undefined {
  if (query.include.length + query.exclude.length + query.tags.length + query.notTags.length > MAX_CLAUSES) {
    return `Query parameter "q" may have at most ${MAX_CLAUSES} different words or phrases`;
  }
  if ([...query.include, ...query.exclude].some((c) => c.terms.length > MAX_PHRASE_TERMS)) {
    return `Query parameter "q" may have at most ${MAX_PHRASE_TERMS} words in a phrase`;
  }
  return undefined;
}

const clauseKey = (c: Clause) => `${c.prefix ? '*' : ' '}${c.terms.join(' ')}`;

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const PIECE = /[\p{L}\p{N}]+/gu;
const SPACE = /\s/u;
/** `tag:name` (not quoted): a filter, not words. Anything else that starts `tag:` is searched as words. */
const TAG_TERM = new RegExp(`^[tT][aA][gG]:#?(${TAG_CHARACTER}{1,${TAG_MAX_LENGTH}})$`, 'u');

/** Terms of one piece of query text, split exactly as documents are (see text.ts). */
function termsOf(text: string): string[] {
  const terms: string[] = [];
  for (const run of text.matchAll(WORD)) {
    for (const piece of fold(run[0]).matchAll(PIECE)) terms.push(piece[0]);
  }
  return terms;
}

export function parseQuery(q: string): SearchQuery {
  const query: SearchQuery = { include: [], exclude: [], impossible: false, tags: [], notTags: [] };
  // A clause given twice means what it means once (`a a a …` is `a`).
  const seen = { include: new Set<string>(), exclude: new Set<string>() };
  let i = 0;
  while (i < q.length) {
    if (SPACE.test(q[i]!)) {
      i += 1;
      continue;
    }
    let negated = false;
    if (q[i] === '-' && i + 1 < q.length && !SPACE.test(q[i + 1]!)) {
      negated = true;
      i += 1;
    }
    let text: string;
    if (q[i] === '"') {
      const close = q.indexOf('"', i + 1);
      const end = close === -1 ? q.length : close;
      text = q.slice(i + 1, end);
      i = close === -1 ? q.length : close + 1;
      if (q[i] === '*') {
        text += '*';
        i += 1;
      }
    } else {
      const start = i;
      while (i < q.length && !SPACE.test(q[i]!)) i += 1;
      text = q.slice(start, i);
      const tag = TAG_TERM.exec(text);
      if (tag !== null) {
        const list = negated ? query.notTags : query.tags;
        const name = tag[1]!.toLowerCase();
        if (!list.includes(name)) list.push(name);
        continue;
      }
    }
    const prefix = text.endsWith('*');
    const terms = termsOf(prefix ? text.slice(0, -1) : text);
    if (terms.length === 0) continue;
    // A word longer than any indexed term is in no document: required, nothing matches;
    // excluded, it excludes nothing. As a prefix it is cut to the longest indexed length.
    const tooLong = terms.some((term, k) => term.length > MAX_TERM_LENGTH && !(prefix && k === terms.length - 1));
    if (tooLong) {
      if (!negated) query.impossible = true;
      continue;
    }
    if (prefix) terms[terms.length - 1] = terms.at(-1)!.slice(0, MAX_TERM_LENGTH);
    const clause = { terms, prefix };
    const side = negated ? 'exclude' : 'include';
    const key = clauseKey(clause);
    if (seen[side].has(key)) continue;
    seen[side].add(key);
    query[side].push(clause);
  }
  // Wanted and excluded at once: no note can match.
  if (query.include.some((c) => seen.exclude.has(clauseKey(c)))) query.impossible = true;
  if (query.tags.some((t) => query.notTags.includes(t))) query.impossible = true;
  return query;
}

/** SQLite FTS5 expression over the title and body columns; every term is a quoted string. */
export function toFts5(clauses: Clause[], columns: string, join: 'AND' | 'OR'): string {
  const parts = clauses.map((c) => `"${c.terms.join(' ').replaceAll('"', '""')}"${c.prefix ? '*' : ''}`);
  return `{${columns}} : (${parts.join(` ${join} `)})`;
}

/** PostgreSQL tsquery text; `weight` 'A' restricts a clause to the title. Lexemes are quoted. */
export function toTsquery(clauses: Clause[], join: '&' | '|', weight = ''): string {
  return clauses
    .map((c) => {
      const last = c.terms.length - 1;
      const lexemes = c.terms.map(
        (t, k) =>
          `'${t.replaceAll('\\', '\\\\').replaceAll("'", "''")}'${
            (k === last && c.prefix) || weight !== '' ? `:${k === last && c.prefix ? '*' : ''}${weight}` : ''
          }`,
      );
      return `(${lexemes.join(' <-> ')})`;
    })
    .join(` ${join} `);
}
