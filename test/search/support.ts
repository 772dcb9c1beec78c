import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import type { Session } from '../helpers/harness.js';
import { okJson } from '../notes/support.js';

export interface SearchResult {
  id: string;
  title: string;
  updated_at: string;
  snippet: string;
  highlights: Array<[number, number]>;
  version?: number;
  version_id?: string;
}

export const RESULT_KEYS = ['id', 'title', 'updated_at', 'snippet', 'highlights'];
export const HISTORY_RESULT_KEYS = [...RESULT_KEYS, 'version', 'version_id'];

export function searchClient(app: () => FastifyInstance) {
  const raw = (s: Session | undefined, query: string) =>
    app().inject({ method: 'GET', url: `/api/notes/search?${query}`, headers: s?.auth ?? {} });
  return {
    raw,
    /** GET /api/notes/search?q=…, asserting 200 and the result shape; returns the results. */
    async search(s: Session, q: string, extra = ''): Promise<SearchResult[]> {
      const results = okJson<SearchResult[]>(await raw(s, `q=${encodeURIComponent(q)}${extra}`));
      const history = /(^|&)history=(1|t|T|TRUE|true|True)(&|$)/.test(extra);
      for (const r of results) {
        assert.deepEqual(Object.keys(r), history ? HISTORY_RESULT_KEYS : RESULT_KEYS);
        assert.ok(r.snippet.length <= 200, `snippet of ${r.snippet.length} characters`);
        for (const [start, end] of r.highlights)
          assert.ok(start >= 0 && start < end && end <= r.snippet.length, JSON.stringify(r));
      }
      return results;
    },
    /** The titles found, in order. */
    async titles(s: Session, q: string, extra = ''): Promise<string[]> {
      return (await this.search(s, q, extra)).map((r) => r.title);
    },
  };
}

/** The highlighted words of a result. */
export const highlighted = (r: SearchResult): string[] => r.highlights.map(([a, b]) => r.snippet.slice(a, b));
