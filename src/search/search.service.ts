import type { Db } from '../db/schema.js';
import { Errors } from '../errors.js';
import { parseQuery } from './query.js';
import * as repo from './search.repository.js';
import { leadSnippet, makeSnippet, type Snippet } from './snippet.js';

export const QUERY_MAX_CHARACTERS = 256;

export interface SearchResult extends Snippet {
  id: string;
  title: string;
  updated_at: string;
  /** Only when searching history: the newest version of the note that matches. */
  version?: number;
  version_id?: string;
}

/** GET /notes/search: the caller's matching notes, best first, each with a snippet around the match. */
export async function searchNotes(
  db: Db, ownerId: string, input: { q: string; history: boolean; limit: number; offset: number },
): Promise<SearchResult[]> {
  const length = [...input.q].length;
  if (length < 1 || length > QUERY_MAX_CHARACTERS) {
    throw Errors.invalidQuery(`Query parameter "q" must be 1 to ${QUERY_MAX_CHARACTERS} characters`);
  }
  const query = parseQuery(input.q);
  // Nothing searchable (only punctuation, say), or a required word no note can contain.
  if (query.impossible || (query.include.length === 0 && query.exclude.length === 0)) return [];
  const hits = await repo.findMatches(db, ownerId, query, input.history, { limit: input.limit, offset: input.offset });
  const texts = new Map((await repo.versionTexts(db, hits.map((h) => h.version_id))).map((row) => [row.id, row]));
  return hits.map((hit) => {
    const text = texts.get(hit.version_id);
    const title = text?.title ?? '';
    const content = text?.content ?? '';
    const snippet = makeSnippet(content, query.include) ?? makeSnippet(title, query.include) ?? leadSnippet(content);
    const result: SearchResult = { id: hit.id, title, updated_at: hit.updated_at, ...snippet };
    if (input.history) {
      result.version = hit.version;
      result.version_id = hit.version_id;
    }
    return result;
  });
}
