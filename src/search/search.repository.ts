import { sql } from 'kysely';
import { isPostgres } from '../db/dialect.js';
import { ownedOrShared } from '../members/access.repository.js';
import type { Db } from '../db/schema.js';
import { ownerTerm } from './search.index.js';
import { toFts5, toTsquery, type SearchQuery } from './query.js';

/** A found note: which version matched (the current one unless searching history). */
export interface Hit {
  id: string;
  updated_at: string;
  version: number;
  version_id: string;
}

/** How many of the newest matching versions history search ranks (see docs/operations.md, "Search"). */
export const HISTORY_CANDIDATES = 5000;

export interface SearchPage {
  limit: number;
  offset: number;
}

/**
 * Which notes a search looks at besides its words: archived ones or the others, one folder (null:
 * the top level), and tags they must have (or a tag below) and must not have. Applied to each
 * note's present state, like the list's filters.
 */
export interface SearchScope {
  archived: boolean;
  folder?: string | null;
  tags: string[];
  notTags: string[];
  /**
   * Notes other people shared with the searcher (`viewer`) are searched too: `owners` are those
   * people. Absent when nothing is shared with the searcher (the usual, fastest, search).
   */
  shared?: { viewer: string; owners: string[] };
}

export const DEFAULT_SCOPE: SearchScope = { archived: false, tags: [], notTags: [] };

/** Whether only what every search leaves out (archived notes) is left out: SQLite's fast path. */
export const isDefaultScope = (scope: SearchScope) =>
  !scope.archived &&
  scope.folder === undefined &&
  scope.tags.length === 0 &&
  scope.notTags.length === 0 &&
  scope.shared === undefined;

/** Whose notes a search looks at: the searcher's, and those of people who shared notes with them. */
const ownersOf = (ownerId: string, scope: SearchScope): string[] => [ownerId, ...(scope.shared?.owners ?? [])];

/** The scope as conditions on the notes row `n` (plain SQL on both engines). */
export function scopeConditions(scope: SearchScope) {
  const parts = [sql`n.archived = ${scope.archived}`];
  // Of the sharers' notes, only those shared with the searcher (the searcher's own always pass).
  if (scope.shared !== undefined) {
    const viewer = scope.shared.viewer;
    parts.push(ownedOrShared(viewer, 'n'));
  }
  if (scope.folder === null) parts.push(sql`n.folder_id is null`);
  else if (scope.folder !== undefined) parts.push(sql`n.folder_id = ${scope.folder}`);
  // Primary-key probes of note_tags (see listNotes in notes.repository.ts for why not by owner).
  for (const tag of scope.tags)
    parts.push(sql`exists (select 1 from note_tags t where t.note_id = n.id and t.tag = ${tag})`);
  for (const tag of scope.notTags)
    parts.push(sql`not exists (select 1 from note_tags t where t.note_id = n.id and t.tag = ${tag})`);
  return sql.join(parts, sql` and `);
}

/**
 * One page of the caller's notes that match, best first: a match in the title before one only in
 * the content, then the engine's relevance (bm25 / ts_rank), then (current search) the most
 * recently written, or (history) the most recently updated. Trashed notes are never found. With
 * `history`, every version counts and each note appears once, for its newest matching version.
 */
export function findMatches(
  db: Db,
  ownerId: string,
  query: SearchQuery,
  history: boolean,
  page: SearchPage,
  scope: SearchScope,
  budgeted = false,
): Promise<Hit[]> {
  return isPostgres(db)
    ? postgresMatches(db, ownerId, query, history, page, scope)
    : sqliteMatches(db, ownerId, query, history, page, scope, budgeted);
}

/**
 * The name of the SQL function the search worker adds to its SQLite connection: it answers true
 * until the search's time budget is spent, then throws, which ends the statement. SQLite calls it
 * for each row the full-text index yields, so a search stops within one row's work of its budget
 * (better-sqlite3 has no interrupt or progress handler; see search.worker.ts).
 */
export const BUDGET_FUNCTION = 'search_budget';

async function sqliteMatches(
  db: Db,
  ownerId: string,
  query: SearchQuery,
  history: boolean,
  page: SearchPage,
  scope: SearchScope,
  budgeted: boolean,
): Promise<Hit[]> {
  const budget = (rowid: string) => (budgeted ? sql` and ${sql.raw(BUDGET_FUNCTION)}(${sql.raw(rowid)})` : sql``);
  const owner = `{owner} : (${ownersOf(ownerId, scope)
    .map((id) => `"${ownerTerm(id)}"`)
    .join(' OR ')})`;
  let match = owner;
  if (query.include.length > 0) match += ` AND ${toFts5(query.include, 'title body', 'AND')}`;
  if (query.exclude.length > 0) match = `(${match}) NOT ${toFts5(query.exclude, 'title body', 'OR')}`;
  // Rows with a wanted clause in the title: they rank above the rest.
  const titleMatch = `${owner} AND ${toFts5(query.include, 'title', 'OR')}`;
  if (!history) {
    // Only the matches that are a note's current version outside the trash (search_current, an
    // integer key look-up each, kept by triggers); ties go to the most recently written, which the
    // keys give without reading the notes. Only the page is then joined to its notes. CROSS JOIN
    // keeps the FTS5 scan outside: written as `rowid in (select key …)`, SQLite hands the keys to
    // FTS5, which runs the whole MATCH once per key (57 s instead of 12 ms for a common word).
    // The title tier as a score with weight on the title alone: below zero exactly when a wanted
    // clause is in the title (bm25 of a present term is never 0, FTS5 floors idf above it). Cheaper
    // than looking each row up among the title matches. A query of only exclusions has no tier (a
    // constant would read as a column number in ORDER BY).
    const titled = query.include.length > 0 ? sql`(bm25(search_history, 0, 1, 0) < 0) desc, ` : sql``;
    // bm25 weights: owner 0 (it is in every row), title 4, body 1. search_current leaves out
    // archived notes too (migration 2026-11-24-31-b), so the usual search needs no notes row; a
    // narrower scope joins each match to its note, still driven by the full-text match.
    const { rows: keys } = isDefaultScope(scope)
      ? await sql<{ key: number }>`
        select h.rowid as key from search_history h cross join search_current c on c.key = h.rowid
        where search_history match ${match}${budget('h.rowid')}
        order by ${titled}bm25(search_history, 0, 4, 1), h.rowid desc
        limit ${page.limit} offset ${page.offset}`.execute(db)
      : await sql<{ key: number }>`
        select h.rowid as key from search_history h
          cross join search_version_keys k on k.id = h.rowid
          cross join notes n on n.id = k.note_id and n.version_id = k.version_id
        where search_history match ${match}${budget('h.rowid')} and n.deleted_at is null and ${scopeConditions(scope)}
        order by ${titled}bm25(search_history, 0, 4, 1), h.rowid desc
        limit ${page.limit} offset ${page.offset}`.execute(db);
    if (keys.length === 0) return [];
    const { rows } = await sql<Hit & { key: number }>`
      select k.id as key, n.id, n.updated_at, n.version, n.version_id
      from search_version_keys k join notes n on n.id = k.note_id
      where k.id in (${sql.join(keys.map((row) => row.key))})`.execute(db);
    const byKey = new Map(rows.map(({ key, ...hit }) => [key, hit]));
    return keys.flatMap((row) => byKey.get(row.key) ?? []);
  }
  // History: rank the newest HISTORY_CANDIDATES matching versions (FTS5 walks rowids, which grow
  // with every version written, newest first and stops there), so a word found in 100,000 old
  // versions costs what 5,000 do. The title tier is looked up within the same rowid range.
  const titled =
    query.include.length > 0
      ? sql`(cand.id in (select rowid from search_history where search_history match ${titleMatch}
        and rowid >= (select min(id) from cand)${budget('rowid')}))`
      : sql`0`;
  const { rows } = await sql<Hit>`
    with cand as (
      select rowid as id, bm25(search_history, 0, 4, 1) as score from search_history
      where search_history match ${match}${budget('rowid')} order by rowid desc limit ${HISTORY_CANDIDATES}),
    hits as (
      select k.note_id, k.version_id, k.version, ${titled} as tier, cand.score
      from cand join search_version_keys k on k.id = cand.id),
    newest as (
      select hits.*, row_number() over (partition by note_id order by version desc) as rank from hits)
    select n.id, n.updated_at, newest.version, newest.version_id
    from newest join notes n on n.id = newest.note_id
    where newest.rank = 1 and n.owner_id in (${sql.join(ownersOf(ownerId, scope))}) and n.deleted_at is null and ${scopeConditions(scope)}
    order by newest.tier desc, newest.score, n.updated_at desc, n.id desc
    limit ${page.limit} offset ${page.offset}`.execute(db);
  return rows;
}

async function postgresMatches(
  db: Db,
  ownerId: string,
  query: SearchQuery,
  history: boolean,
  page: SearchPage,
  scope: SearchScope,
): Promise<Hit[]> {
  const parts: string[] = [];
  if (query.include.length > 0) parts.push(`(${toTsquery(query.include, '&')})`);
  for (const clause of query.exclude) parts.push(`!${toTsquery([clause], '&')}`);
  const tsquery = sql`${parts.join(' & ')}::tsquery`;
  const ranked = query.include.length > 0;
  const tier = ranked ? sql`(s.tsv @@ ${toTsquery(query.include, '|', 'A')}::tsquery)` : sql`false`;
  const score = ranked ? sql`ts_rank(s.tsv, ${tsquery})` : sql`0::real`;
  if (!history) {
    // Constants may not stand in ORDER BY, so a query of only exclusions orders by write order alone
    // (ties: the most recently written first, as on SQLite).
    const order = ranked ? sql`${tier} desc, ${score} desc, ` : sql``;
    const { rows } = await sql<Hit>`
      select n.id, n.updated_at, n.version, n.version_id
      from search_history s join notes n on n.id = s.note_id and n.version_id = s.version_id
      where s.owner_id in (${sql.join(ownersOf(ownerId, scope))}) and s.tsv @@ ${tsquery} and n.deleted_at is null and ${scopeConditions(scope)}
      order by ${order}s.seq desc
      limit ${page.limit} offset ${page.offset}`.execute(db);
    return rows;
  }
  // As on SQLite: the newest HISTORY_CANDIDATES matches (in write order), then each note's newest
  // matching version, and only those rows are ranked.
  const rankedTier = ranked ? sql`(h.tsv @@ ${toTsquery(query.include, '|', 'A')}::tsquery)` : sql`false`;
  const rankedScore = ranked ? sql`ts_rank(h.tsv, ${tsquery})` : sql`0::real`;
  const { rows } = await sql<Hit>`
    with cand as (
      select s.version_id, s.note_id, s.version from search_history s
      where s.owner_id in (${sql.join(ownersOf(ownerId, scope))}) and s.tsv @@ ${tsquery}
      order by s.seq desc limit ${HISTORY_CANDIDATES}),
    newest as (
      select distinct on (note_id) version_id, note_id, version from cand order by note_id, version desc),
    ranked as (
      select newest.*, ${rankedTier} as tier, ${rankedScore} as score
      from newest join search_history h on h.version_id = newest.version_id)
    select n.id, n.updated_at, r.version, r.version_id
    from ranked r join notes n on n.id = r.note_id
    where n.deleted_at is null and ${scopeConditions(scope)}
    order by r.tier desc, r.score desc, n.updated_at desc, n.id desc
    limit ${page.limit} offset ${page.offset}`.execute(db);
  return rows;
}

/** A search of only `tag:` terms: the notes in scope, most recently updated first (no words to rank by). */
export async function findInScope(db: Db, ownerId: string, scope: SearchScope, page: SearchPage): Promise<Hit[]> {
  const { rows } = await sql<Hit>`
    select n.id, n.updated_at, n.version, n.version_id from notes n
    where n.owner_id in (${sql.join(ownersOf(ownerId, scope))}) and n.deleted_at is null and ${scopeConditions(scope)}
    order by n.updated_at desc, n.id desc
    limit ${page.limit} offset ${page.offset}`.execute(db);
  return rows;
}

/** Title and content of the given versions (only a page of them, after ranking). */
export function versionTexts(db: Db, versionIds: string[]) {
  if (versionIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('note_versions').select(['id', 'title', 'content']).where('id', 'in', versionIds).execute();
}
