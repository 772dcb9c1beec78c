import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Db } from '../db/schema.js';
import { PaginationQuery, pageOf } from '../http/schemas.js';
import { Role } from '../members/members.schemas.js';
import { callerId } from '../http/caller.js';
import { NoteRowSchema } from './notes.schemas.js';
import { sharedWithMe } from './shared-with-me.service.js';

export const SharedNoteRowSchema = Type.Object(
  {
    ...NoteRowSchema.properties,
    owner_username: Type.String(),
    role: Role,
  },
  { $id: 'SharedNoteRow' },
);

/** GET /api/notes/shared: notes as members/ shares them (registered just before the member routes, under /api). */
export const sharedWithMeRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (app, { db }) => {
  app.get(
    '/notes/shared',
    {
      config: { policy: { auth: 'access' } },
      schema: {
        tags: ['sharing'],
        operationId: 'listSharedWithMe',
        summary: 'Notes shared with the caller',
        description:
          "Notes other people shared with the caller (outside their trash), most recently updated first, with their owner and the caller's role.",
        querystring: PaginationQuery,
        response: { 200: Type.Array(SharedNoteRowSchema) },
      },
    },
    async (request) => sharedWithMe(db, callerId(request), pageOf(request.query)),
  );
};
