import { callerId } from '../http/caller.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { DatabaseConfig } from '../config.js';
import type { Db } from '../db/schema.js';
import type { RoutePolicy } from '../http/policy.js';
import { BooleanString, isTrue, Limit, Offset, Query, Timestamp, Uuid } from '../http/schemas.js';
import { FolderFilter } from '../folders/folders.schemas.js';
import { TagFilter } from '../tags/tags.schemas.js';
import { normalizeId } from '../shared/ids.js';
import { createSearchRunner } from './search.runner.js';
import { QUERY_MAX_CHARACTERS, searchNotes } from './search.service.js';

export interface SearchRoutesOptions {
  db: Db;
  /** The database as the search workers open it (a SQLite file read-only, or PostgreSQL). */
  database: DatabaseConfig;
}

const DEFAULT_LIMIT = 20;

const SearchQuery = Query({
  q: Type.String({
    minLength: 1,
    maxLength: QUERY_MAX_CHARACTERS,
    description:
      'words (all must match), "a phrase", -excluded, prefix*; case and accents are ignored; ' +
      '`tag:name` keeps notes with that tag (or a tag below it), `-tag:name` leaves them out; only tag: terms list those notes, newest first. ' +
      'At most 32 different words, phrases and tags, and at most 32 words in a phrase (else 400)',
  }),
  history: Type.Optional(BooleanString('also search earlier versions')),
  folder: Type.Optional(FolderFilter),
  tag: Type.Optional(TagFilter),
  archived: Type.Optional(BooleanString('true: search only archived notes; false: only the others')),
  limit: Type.Optional(Limit(DEFAULT_LIMIT)),
  offset: Type.Optional(Offset()),
});

const SearchResultSchema = Type.Object(
  {
    id: Uuid,
    title: Type.String(),
    updated_at: Timestamp,
    snippet: Type.String({ maxLength: 200, description: 'plain text around the best match' }),
    highlights: Type.Array(Type.Array(Type.Integer({ minimum: 0 }), { minItems: 2, maxItems: 2 }), {
      description: '[start, end) of each matched word in snippet, in JavaScript string indices',
    }),
    version: Type.Optional(Type.Integer({ minimum: 1, description: 'history=true: the newest version that matches' })),
    version_id: Type.Optional(Uuid),
  },
  { $id: 'SearchResult' },
);

/** Every route here: the caller's own notes, with a valid access token. */
const SIGNED_IN: RoutePolicy = { auth: 'access' };

export const searchRoutes: FastifyPluginAsyncTypebox<SearchRoutesOptions> = async (app, { db, database }) => {
  const runner = createSearchRunner();
  app.addHook('onClose', async () => runner.close());
  const source =
    database.kind === 'postgres'
      ? { kind: 'postgres' as const, url: database.url }
      : database.filename === ':memory:'
        ? undefined
        : { kind: 'sqlite' as const, filename: database.filename };
  const context = { db, runner, source };

  app.get(
    '/',
    {
      config: { policy: SIGNED_IN, docs: { errors: [404] } },
      schema: {
        tags: ['search'],
        summary: 'Full-text search of your notes (optionally through their history)',
        querystring: SearchQuery,
        response: { 200: Type.Array(SearchResultSchema) },
      },
    },
    async (request) => {
      const { q, history, limit = DEFAULT_LIMIT, offset = 0, folder, tag, archived } = request.query;
      return searchNotes(context, callerId(request), {
        q,
        history: isTrue(history),
        limit,
        offset,
        tag,
        archived: isTrue(archived),
        folder: folder === undefined ? undefined : folder === 'root' ? null : normalizeId(folder),
      });
    },
  );
};
