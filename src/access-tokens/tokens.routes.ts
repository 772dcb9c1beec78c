import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AccountStore } from '../accounts/accounts.service.js';
import { callerClaims, callerId } from '../http/caller.js';
import { clientInfo } from '../http/client-info.js';
import type { RoutePolicy } from '../http/policy.js';
import type { Reauthenticate } from '../sessions/reauthentication.js';
import { REAUTHENTICATION_BODY_LIMIT, REAUTHENTICATION_NOTE } from '../sessions/sessions.schemas.js';
import { normalizeId } from '../shared/ids.js';
import * as schemas from './tokens.schemas.js';
import * as tokens from './tokens.service.js';

const tags = ['auth'];

export interface AccessTokenRoutesOptions {
  services: AccountStore;
  /** The password asked again (auth/reauthentication.service.ts, given by app.ts). */
  reauthenticate: Reauthenticate;
}

/** Personal access tokens, for scripts and other apps; under /api/auth (so a token cannot manage tokens). */
export const accessTokenRoutes: FastifyPluginAsyncTypebox<AccessTokenRoutesOptions> = async (
  app,
  { services, reauthenticate },
) => {
  app.post(
    '/tokens',
    {
      bodyLimit: REAUTHENTICATION_BODY_LIMIT,
      config: {
        policy: { auth: 'access', limit: 'password', hashesPassword: true, noStore: true },
        failureDetail: 'Failed to create the token',
        docs: { errors: [404] },
      },
      schema: {
        tags,
        operationId: 'createAccessToken',
        summary: 'Create a personal access token',
        description:
          `${REAUTHENTICATION_NOTE} The token is in this answer only; only its SHA-256 is kept. ` +
          'Use it as `Authorization: Bearer vlm_…` on notes, folders, tags, search, trash, export/import and attachments ' +
          '(notes:read for GET, notes:write for the rest), or as the password of HTTP Basic on /dav/ (dav). Never on /api/auth/*.',
        body: schemas.CreateTokenBody,
        response: { 201: schemas.CreatedToken },
      },
    },
    async (request, reply) => {
      const userId = callerId(request);
      await reauthenticate(callerClaims(request), request.body, clientInfo(request), 'token_create');
      const created = await tokens.createToken(services, userId, request.body, clientInfo(request));
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/tokens',
    {
      config: { policy: { auth: 'access', noStore: true }, failureDetail: 'Failed to list tokens' },
      schema: {
        tags,
        operationId: 'listAccessTokens',
        summary: "The caller's tokens (never the secrets)",
        response: { 200: Type.Array(schemas.TokenSchema) },
      },
    },
    async (request) => tokens.listTokens(services.db, callerId(request)),
  );

  app.delete(
    '/tokens/:id',
    {
      config: {
        policy: { auth: 'access', noStore: true },
        failureDetail: 'Failed to revoke the token',
        docs: { noContent: true, errors: [404] },
      },
      schema: {
        tags,
        operationId: 'revokeAccessToken',
        summary: 'Revoke a token',
        description: 'Effective at once.',
        params: schemas.TokenParams,
      },
    },
    async (request, reply) => {
      await tokens.revokeToken(services, callerId(request), normalizeId(request.params.id), clientInfo(request));
      return reply.code(204).send();
    },
  );
};
