import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { DatabaseConfig } from '../config.js';
import type { Db } from '../db/schema.js';
import { Errors } from '../errors.js';
import { requireUserId } from '../http/access.js';
import { parsePage } from '../http/pagination.js';
import type { RoutePolicy } from '../http/policy.js';
import { BOOLEAN_STRINGS, parseBooleanString, Timestamp, Uuid } from '../http/schemas.js';
import { createSearchRunner } from './search.runner.js';
import { searchNotes } from './search.service.js';

export interface SearchRoutesOptions {
  db: Db;
  /** The database as the search workers open it (a SQLite file read-only, or PostgreSQL). */
  database: DatabaseConfig;
}

const DEFAULT_LIMIT = 20;

const SearchQuery = Type.Object({
  q: Type.Optional(Type.String({
    description: '1 to 256 characters: words (all must match), "a phrase", -excluded, prefix*; case and accents are ignored',
  })),
  history: Type.Optional(Type.String({ description: 'also search earlier versions (a boolean string, default false)' })),
  limit: Type.Optional(Type.String({ description: 'page size, 1 to 100 (default 20)' })),
  offset: Type.Optional(Type.String({ description: 'rows to skip, 0 or more (default 0)' })),
});

const SearchResultSchema = Type.Object({
  id: Uuid,
  title: Type.String(),
  updated_at: Timestamp,
  snippet: Type.String({ maxLength: 200, description: 'plain text around the best match' }),
  highlights: Type.Array(Type.Array(Type.Integer({ minimum: 0 }), { minItems: 2, maxItems: 2 }), {
    description: '[start, end) of each matched word in snippet, in JavaScript string indices',
  }),
  version: Type.Optional(Type.Integer({ minimum: 1, description: 'history=true: the newest version that matches' })),
  version_id: Type.Optional(Uuid),
}, { $id: 'SearchResult' });

/** Every route here: the caller's own notes, with a valid access token. */
const SIGNED_IN: RoutePolicy = { auth: 'access' };

export const searchRoutes: FastifyPluginAsyncTypebox<SearchRoutesOptions> = async (app, { db, database }) => {
  const runner = createSearchRunner();
  app.addHook('onClose', async () => runner.close());
  const source = database.kind === 'postgres' ? { kind: 'postgres' as const, url: database.url }
    : database.filename === ':memory:' ? undefined : { kind: 'sqlite' as const, filename: database.filename };
  const context = { db, runner, source };

  app.get('/', {
    config: { policy: SIGNED_IN },
    schema: {
      tags: ['search'],
      summary: 'Full-text search of your notes (optionally through their history)',
      querystring: SearchQuery,
      response: { 200: Type.Array(SearchResultSchema) },
    },
  }, async (request) => {
    const { q, history } = request.query;
    if (q === undefined) throw Errors.invalidQuery('Query parameter "q" is required (1 to 256 characters)');
    if (history !== undefined && !BOOLEAN_STRINGS.includes(history)) {
      throw Errors.invalidQuery('Query parameter "history" must be true or false');
    }
    const page = parsePage({ limit: request.query.limit ?? String(DEFAULT_LIMIT), offset: request.query.offset });
    return searchNotes(context, requireUserId(request.claims!), { q, history: parseBooleanString(history), ...page });
  });
};
