import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { Timestamp, Uuid } from '../http/schemas.js';
import { normalizeId } from '../shared/ids.js';
import type { AuthServices, ClientInfo } from '../accounts/accounts.service.js';
import type { AuthHooks } from '../http/access.js';
import { listSessions, revokeSession } from './sessions.service.js';

export const SessionSchema = Type.Object(
  {
    id: Uuid,
    created_at: Timestamp,
    last_used_at: Timestamp,
    user_agent: Type.Union([Type.String(), Type.Null()]),
    ip_address: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'Session', description: 'one login: its refresh tokens, linked by rotation' },
);

const SessionParams = Type.Object({ sessionID: Uuid });

export interface SessionRoutesOptions {
  services: AuthServices;
  hooks: AuthHooks;
  clientInfo: (request: FastifyRequest) => ClientInfo;
}

/** The caller's own sign-ins; registered under /api/auth. */
export const sessionRoutes: FastifyPluginAsyncTypebox<SessionRoutesOptions> = async (app, { services, hooks, clientInfo }) => {
  app.get('/sessions', {
    onRequest: hooks.access,
    config: { failureDetail: 'Failed to retrieve sessions' },
    schema: {
      operationId: 'listSessions',
      summary: 'List the caller\'s sessions',
      description: 'Active sessions of the caller, newest first',
      response: { 200: Type.Array(SessionSchema) },
    },
  }, async (request) => listSessions(services, request.claims!));

  app.delete('/sessions/:sessionID', {
    onRequest: hooks.access,
    config: { failureDetail: 'Failed to revoke session' },
    schema: {
      operationId: 'revokeSession',
      summary: 'End one session',
      description: 'Revokes one session (every refresh token of it)',
      params: SessionParams,
    },
  }, async (request, reply) => {
    await revokeSession(services, request.claims!, normalizeId(request.params.sessionID), clientInfo(request));
    return reply.code(204).send();
  });
};
