import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Config } from '../config.js';
import { callerClaims, callerId } from '../http/caller.js';
import { clientInfo } from '../http/client-info.js';
import type { RoutePolicy } from '../http/policy.js';
import { absentBodyAsEmpty } from '../http/schemas.js';
import { normalizeId } from '../shared/ids.js';
import { clearAuthCookies, setAuthCookies } from './cookies.js';
import type { Reauthenticate } from './reauthentication.js';
import * as schemas from './sessions.schemas.js';
import * as sessions from './sessions.service.js';

export interface SessionRoutesOptions {
  config: Config;
  services: sessions.SessionServices;
  /** The password asked again (auth/reauthentication.service.ts, given by app.ts). */
  reauthenticate: Reauthenticate;
}

const SIGNED_IN: RoutePolicy = { auth: 'access', noStore: true };
/** The password asked again (a hash per call): the password limit, as for a password change. */
const WITH_PASSWORD: RoutePolicy = { ...SIGNED_IN, limit: 'password', hashesPassword: true };
const tags = ['auth'];

/** The caller's sessions; under /api/auth (signing in and out and the refresh cookie: auth/auth.routes.ts). */
export const sessionRoutes: FastifyPluginAsyncTypebox<SessionRoutesOptions> = async (
  app,
  { config, services, reauthenticate },
) => {
  const sendTokens = (reply: Parameters<typeof setAuthCookies>[0], issued: sessions.IssuedTokens) =>
    setAuthCookies(reply, config, issued.refreshToken, issued.refreshExpiresAt);

  app.get(
    '/sessions',
    {
      config: { policy: SIGNED_IN, failureDetail: 'Failed to retrieve sessions' },
      schema: {
        tags,
        operationId: 'listSessions',
        summary: "List the caller's sessions",
        description: 'Active sessions of the caller, newest first',
        response: { 200: Type.Array(schemas.SessionSchema) },
      },
    },
    async (request) => sessions.listSessions(services, callerId(request), callerClaims(request).jti),
  );

  app.post(
    '/sessions/end-others',
    {
      bodyLimit: schemas.REAUTHENTICATION_BODY_LIMIT,
      config: {
        policy: WITH_PASSWORD,
        failureDetail: 'Failed to generate tokens',
        docs: { errors: [404], headers: { 200: ['Set-Cookie', 'Cache-Control'] } },
      },
      schema: {
        tags,
        operationId: 'endOtherSessions',
        summary: 'Sign out everywhere else',
        description:
          'Ends every session of the caller, as a password change does, and starts a new one here: a new access token ' +
          `and refresh cookie. Offered after a second factor is added or removed. ${schemas.REAUTHENTICATION_NOTE}`,
        body: schemas.ReauthenticationBody,
        response: { 200: schemas.AccessTokenResponse },
      },
      preValidation: absentBodyAsEmpty,
    },
    async (request, reply) => {
      const userId = callerId(request);
      await reauthenticate(callerClaims(request), request.body, clientInfo(request), 'logout');
      const issued = await sessions.restartSessions(services, userId, clientInfo(request));
      sendTokens(reply, issued);
      return { access_token: issued.accessToken };
    },
  );

  app.delete(
    '/sessions/current',
    {
      config: {
        policy: SIGNED_IN,
        failureDetail: 'Failed to logout',
        docs: { noContent: true, headers: { 204: ['Set-Cookie'] } },
      },
      schema: {
        tags,
        operationId: 'endCurrentSession',
        summary: 'Log out on this device',
        description:
          "Ends the session the caller's access token belongs to (every refresh token of it) and clears both cookies; " +
          "the caller's other sessions go on. No password needed: only ending other sessions asks for one. " +
          '`POST /auth/logout` ends every session.',
      },
    },
    async (request, reply) => {
      await sessions.endCurrentSession(services, callerId(request), callerClaims(request).jti, clientInfo(request));
      clearAuthCookies(reply, config);
      return reply.code(204).send();
    },
  );

  app.delete(
    '/sessions/:sessionID',
    {
      bodyLimit: schemas.REAUTHENTICATION_BODY_LIMIT,
      config: { policy: WITH_PASSWORD, failureDetail: 'Failed to revoke session' },
      schema: {
        tags,
        operationId: 'revokeSession',
        summary: 'End one session',
        description: `Revokes one session (every refresh token of it). ${schemas.REAUTHENTICATION_NOTE}`,
        params: schemas.SessionParams,
        body: schemas.ReauthenticationBody,
      },
      preValidation: absentBodyAsEmpty,
    },
    async (request, reply) => {
      const userId = callerId(request);
      await reauthenticate(callerClaims(request), request.body, clientInfo(request), 'session_revoke');
      await sessions.revokeSession(services, userId, normalizeId(request.params.sessionID), clientInfo(request));
      return reply.code(204).send();
    },
  );
};
