import { sql } from 'kysely';
import type { Db } from '../db/schema.js';
import { Errors } from '../errors.js';
import { sharersOf } from '../members/access.repository.js';
import { limitError, parseQuery, type SearchQuery } from './query.js';
import * as repo from './search.repository.js';
import { requireFolder } from '../folders/folders.service.js';
import { normalizeTag } from '../tags/extract.js';
import type { SearchRunner } from './search.runner.js';
import { leadSnippet, makeSnippet, PAGE_SCAN_CHARS, type Snippet } from './snippet.js';

export const QUERY_MAX_CHARACTERS = 256;

/**
 * The time one search may take in the database (docs/api.md, "Search"): past it the search answers 400
 * `query_too_expensive` (on SQLite the worker's budget function ends the statement, on PostgreSQL
 * `statement_timeout`). Waiting in the queue does not count. Real searches take milliseconds.
 */
export const SEARCH_BUDGET_MS = 2000;

export interface SearchResult extends Snippet {
  id: string;
  title: string;
  updated_at: string;
  /** Only when searching history: the newest version of the note that matches. */
  version?: number;
  version_id?: string;
}

export interface SearchInput {
  q: string;
  history: boolean;
  limit: number;
  offset: number;
  /** A folder id, `null` for the top level; undefined: everywhere. */
  folder?: string | null | undefined;
  /** A tag the notes must have (or a tag below it), as a filter names it (`#Work` is `work`). */
  tag?: string | undefined;
  archived?: boolean | undefined;
}

export interface VersionText {
  id: string;
  title: string;
  content: string;
}

/** Where a search runs: the app's handle, the worker pool, and what a worker opens for itself. */
export interface SearchContext {
  db: Db;
  runner: SearchRunner;
  /** The database as a worker opens it; undefined for a `:memory:` SQLite database, which cannot be shared (inline). */
  source: { kind: 'sqlite'; filename: string } | { kind: 'postgres'; url: string } | undefined;
}

/**
 * GET /notes/search: the caller's matching notes, and those shared with them, best first, each with
 * a snippet around the match.
 * `q` is 1 to QUERY_MAX_CHARACTERS characters (the route schema); its word counts are checked here.
 */
export async function searchNotes(ctx: SearchContext, ownerId: string, input: SearchInput): Promise<SearchResult[]> {
  const query = parseQuery(input.q);
  const tooMuch = limitError(query);
  if (tooMuch !== undefined) throw Errors.invalidQuery(tooMuch);
  if (input.folder != null) await requireFolder(ctx.db, ownerId, input.folder);
  // Folders are their owner's: a search in one of the caller's folders finds only the caller's notes.
  const owners = input.folder === undefined ? await sharersOf(ctx.db, ownerId) : [];
  const scope: repo.SearchScope = {
    archived: input.archived ?? false,
    ...(input.folder !== undefined && { folder: input.folder }),
    tags: input.tag === undefined ? query.tags : [...new Set([...query.tags, normalizeTag(input.tag)])],
    notTags: query.notTags,
    ...(owners.length > 0 && { shared: { viewer: ownerId, owners } }),
  };
  const page = { limit: input.limit, offset: input.offset };
  const words = query.include.length > 0 || query.exclude.length > 0;
  // A required word no note can contain, or nothing to look for (only punctuation, say).
  if (query.impossible || scope.tags.some((t) => scope.notTags.includes(t))) return [];
  if (!words) {
    if (query.tags.length === 0 && query.notTags.length === 0) return [];
    // Only tag: terms: the notes that carry them, newest first; an index look-up, no engine work.
    return ctx.db.transaction().execute(async (trx) => {
      const hits = await repo.findInScope(trx, ownerId, scope, page);
      return buildResults(
        hits,
        await repo.versionTexts(
          trx,
          hits.map((h) => h.version_id),
        ),
        query,
        input.history,
      );
    });
  }
  if (ctx.source?.kind === 'postgres') {
    const hits = await postgresHits(ctx.db, ownerId, query, input.history, page, scope);
    if (hits.length === 0) return [];
    return ctx.runner.run({ kind: 'postgres', url: ctx.source.url, hits, query, history: input.history });
  }
  if (ctx.source === undefined) return searchDatabase(ctx.db, ownerId, query, input.history, page, scope, false);
  return ctx.runner.run({
    kind: 'sqlite',
    filename: ctx.source.filename,
    ownerId,
    query,
    history: input.history,
    page,
    scope,
  });
}

/** PostgreSQL cancels the statement at the budget (for this transaction only); that is the 400. */
async function postgresHits(
  db: Db,
  ownerId: string,
  query: SearchQuery,
  history: boolean,
  page: repo.SearchPage,
  scope: repo.SearchScope,
) {
  try {
    return await db.transaction().execute(async (trx) => {
      await sql.raw(`set local statement_timeout = ${SEARCH_BUDGET_MS}`).execute(trx);
      return repo.findMatches(trx, ownerId, query, history, page, scope);
    });
  } catch (error) {
    // 57014 query_canceled: the timeout (nothing else cancels a search).
    if ((error as { code?: unknown }).code === '57014') throw Errors.queryTooExpensive(SEARCH_BUDGET_MS / 1000);
    throw error;
  }
}

/**
 * The matches and their snippets from one SQLite connection: the worker's (with the budget
 * function) or, for a `:memory:` database, the app's own. One read transaction, so the texts are
 * those of the versions found.
 */
export function searchDatabase(
  db: Db,
  ownerId: string,
  query: SearchQuery,
  history: boolean,
  page: repo.SearchPage,
  scope: repo.SearchScope,
  budgeted: boolean,
) {
  return db.transaction().execute(async (trx) => {
    const hits = await repo.findMatches(trx, ownerId, query, history, page, scope, budgeted);
    const texts = await repo.versionTexts(
      trx,
      hits.map((h) => h.version_id),
    );
    return buildResults(hits, texts, query, history);
  });
}

/** The result rows of a page of hits: a snippet from the content, else the title, else the content's start. */
export function buildResults(
  hits: repo.Hit[],
  versionTexts: VersionText[],
  query: SearchQuery,
  history: boolean,
): SearchResult[] {
  const texts = new Map(versionTexts.map((row) => [row.id, row]));
  const budget = { chars: PAGE_SCAN_CHARS };
  return hits.map((hit) => {
    const text = texts.get(hit.version_id);
    const title = text?.title ?? '';
    const content = text?.content ?? '';
    const snippet =
      makeSnippet(content, query.include, budget) ?? makeSnippet(title, query.include) ?? leadSnippet(content);
    const result: SearchResult = { id: hit.id, title, updated_at: hit.updated_at, ...snippet };
    if (history) {
      result.version = hit.version;
      result.version_id = hit.version_id;
    }
    return result;
  });
}
