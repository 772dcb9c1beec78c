import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Db } from '../db/schema.js';
import { PaginationQuery, pageOf } from '../http/schemas.js';
import { Role } from '../members/members.schemas.js';
import { sharedWith } from '../members/members.repository.js';
import { requireUserId } from '../sessions/tokens.js';
import type { Page } from '../shared/page.js';
import { decodeTags } from '../tags/extract.js';
import { NoteRowSchema } from './notes.schemas.js';
import { previewsOf } from './preview.js';

export const SharedNoteRowSchema = Type.Object({
  ...NoteRowSchema.properties,
  owner_username: Type.String(),
  role: Role,
}, { $id: 'SharedNoteRow' });

/** The caller's "Shared with me": list rows of the notes others shared with them, with owner and role. */
export async function sharedWithMe(db: Db, userId: string, page: Page) {
  const rows = await sharedWith(db, userId, page);
  const previews = await previewsOf(db, rows);
  return rows.map(({ version_id: _, ...row }, i) => ({ ...row, tags: decodeTags(row.tags), preview: previews[i]! }));
}

/** GET /api/notes/shared: notes as members/ shares them (registered just before the member routes, under /api). */
export const sharedWithMeRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (app, { db }) => {
  app.get('/notes/shared', {
    config: { policy: { auth: 'access' } },
    schema: {
      tags: ['sharing'], operationId: 'listSharedWithMe', summary: 'Notes shared with the caller',
      description: 'Notes other people shared with the caller (outside their trash), most recently updated first, with their owner and the caller\'s role.',
      querystring: PaginationQuery, response: { 200: Type.Array(SharedNoteRowSchema) },
    },
  }, async (request) => sharedWithMe(db, requireUserId(request.claims!), pageOf(request.query)));
};
