import { callerId } from '../http/caller.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Db } from '../db/schema.js';
import type { RoutePolicy } from '../http/policy.js';
import { countTags } from './tags.repository.js';

const SIGNED_IN: RoutePolicy = { auth: 'access' };

const TagCountSchema = Type.Object(
  {
    name: Type.String({ description: 'lower case; `a/b` also counts as its parent `a`, which is listed too' }),
    count: Type.Integer({
      minimum: 1,
      description: 'notes outside the trash (archived included) that GET /api/notes?tag=name&archived=… finds',
    }),
  },
  { $id: 'TagCount' },
);

export const tagsRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (app, { db }) => {
  app.get(
    '/',
    {
      config: { policy: SIGNED_IN },
      schema: {
        tags: ['tags'],
        operationId: 'listTags',
        summary: "The caller's tags with how many notes carry each",
        description:
          'Tags come from the current version\'s content (see docs/features.md, "Folders, tags, pins and archive"): a `#` at the start or after whitespace, ' +
          'then 1 to 64 letters, digits (not only digits), `_`, `-` or `/`, outside code spans and fenced code blocks. Sorted by name.',
        response: { 200: Type.Array(TagCountSchema) },
      },
    },
    async (request) => countTags(db, callerId(request)),
  );
};
