import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type TSchema } from 'typebox';
import type { Db } from '../db/schema.js';
import { explain } from '../shared/validation/schema-rules.js';
import { PaginationQuery, pageOf, Query, Timestamp, Uuid } from '../http/schemas.js';
import { UUID_PATTERN } from '../shared/ids.js';
import { EVENT_KINDS, listEvents } from './audit.service.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const AuthEventSchema = Type.Object(
  {
    id: Uuid,
    user_id: Nullable(Uuid),
    username: Nullable(Type.String()),
    kind: Type.String({ enum: [...EVENT_KINDS] }),
    outcome: Type.String({ enum: ['success', 'failure'] }),
    ip_address: Nullable(Type.String()),
    user_agent: Nullable(Type.String()),
    detail: Nullable(Type.String()),
    created_at: Timestamp,
  },
  { $id: 'AuthEvent' },
);

const EventsQuery = Query({
  ...PaginationQuery.properties,
  user_id: Type.Optional(
    explain(Type.String({ pattern: UUID_PATTERN, description: 'only events of this user (UUID)' }), 'must be a UUID'),
  ),
  kind: Type.Optional(Type.String({ enum: [...EVENT_KINDS], description: 'only events of this kind' })),
});

/** The audit trail, for administrators; registered under /api/auth. */
export const auditRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (app, { db }) => {
  app.get(
    '/admin/events',
    {
      config: { policy: { auth: 'admin', noStore: true }, failureDetail: 'Failed to retrieve events' },
      schema: {
        tags: ['admin'],
        operationId: 'listAuthEvents',
        summary: 'Read the audit trail',
        description: 'Authentication events, newest first; an empty page is []',
        querystring: EventsQuery,
        response: { 200: Type.Array(AuthEventSchema) },
      },
    },
    async (request) => {
      const { user_id, kind, ...page } = request.query;
      return listEvents(db, { user_id, kind }, pageOf(page));
    },
  );
};
