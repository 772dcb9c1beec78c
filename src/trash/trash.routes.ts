import { callerId } from '../http/caller.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Db } from '../db/schema.js';
import type { RoutePolicy } from '../http/policy.js';
import { PaginationQuery, pageOf, Timestamp, Uuid } from '../http/schemas.js';
import { NoteParams, NoteSchema } from '../notes/notes.schemas.js';
import { normalizeId } from '../shared/ids.js';
import * as trash from './trash.service.js';

export interface TrashRoutesOptions {
  db: Db;
  trashDays: number;
}

const TrashEntrySchema = Type.Object(
  {
    id: Uuid,
    title: Type.String(),
    deleted_at: Timestamp,
    purge_at: { ...Timestamp, description: 'when the hourly job deletes it for good (deleted_at + TRASH_DAYS)' },
  },
  { $id: 'TrashEntry' },
);

const tags = ['trash'];

/** Every route here: the caller's own notes, with a valid access token. */
const SIGNED_IN: RoutePolicy = { auth: 'access' };

export const trashRoutes: FastifyPluginAsyncTypebox<TrashRoutesOptions> = async (app, { db, trashDays }) => {
  app.get(
    '/',
    {
      config: { policy: SIGNED_IN },
      schema: {
        tags,
        summary: 'Notes in the trash, most recently deleted first',
        querystring: PaginationQuery,
        response: { 200: Type.Array(TrashEntrySchema) },
      },
    },
    async (request) => trash.listTrash(db, callerId(request), pageOf(request.query), trashDays),
  );

  app.post(
    '/:noteID/restore',
    {
      config: { policy: SIGNED_IN, docs: { headers: { 200: ['ETag'] } } },
      schema: {
        tags,
        summary: 'Restore a note from the trash with its whole history',
        params: NoteParams,
        response: { 200: NoteSchema },
      },
    },
    async (request, reply) => {
      const note = await trash.restoreFromTrash(db, callerId(request), normalizeId(request.params.noteID));
      return reply.header('etag', `"${note.version}"`).send(note);
    },
  );

  app.delete(
    '/',
    {
      config: { policy: SIGNED_IN },
      schema: {
        tags,
        summary: 'Empty the trash',
        description: "Deletes every note in the caller's trash and their histories for good. `deleted`: how many.",
        response: { 200: Type.Object({ deleted: Type.Integer({ minimum: 0 }) }) },
      },
    },
    async (request) => ({ deleted: await trash.emptyTrash(db, callerId(request)) }),
  );

  app.delete(
    '/:noteID',
    {
      config: { policy: SIGNED_IN },
      schema: { tags, summary: 'Delete a trashed note and its history for good', params: NoteParams },
    },
    async (request, reply) => {
      const noteId = normalizeId(request.params.noteID);
      await trash.deleteFromTrash(db, callerId(request), noteId);
      return reply.code(204).send();
    },
  );
};
