import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../config.js';
import { Errors } from '../errors.js';
import { callerId } from '../http/caller.js';
import { clientInfo } from '../http/client-info.js';
import type { RoutePolicy } from '../http/policy.js';
import { AUTH_BODY_LIMIT, isTrue } from '../http/schemas.js';
import { clearAuthCookies, REFRESH_COOKIE, setAuthCookies } from '../sessions/cookies.js';
import { assertTrustedOrigin } from '../sessions/origin-check.js';
import * as schemas from '../sessions/sessions.schemas.js';
import * as sessions from '../sessions/sessions.service.js';
import { login, type LoginServices } from './login.service.js';

export interface AuthRoutesOptions {
  config: Config;
  services: LoginServices;
}

const SIGNED_IN: RoutePolicy = { auth: 'access', noStore: true };
const COOKIE: RoutePolicy = { auth: 'cookie', noStore: true };
const tags = ['auth'];

/** Signing in and out, and the refresh cookie; under /api/auth (the caller's sessions: sessions/sessions.routes.ts). */
export const authRoutes: FastifyPluginAsyncTypebox<AuthRoutesOptions> = async (app, { config, services }) => {
  const sendTokens = (reply: Parameters<typeof setAuthCookies>[0], issued: sessions.IssuedTokens) =>
    setAuthCookies(reply, config, issued.refreshToken, issued.refreshExpiresAt);

  app.post(
    '/login',
    {
      bodyLimit: AUTH_BODY_LIMIT,
      config: {
        policy: { auth: 'public', limit: 'password', hashesPassword: true, loginLockout: true, noStore: true },
        failureDetail: 'Failed to generate tokens',
        docs: { errors: [401, 403], headers: { 200: ['Set-Cookie', 'Cache-Control'] } },
      },
      schema: {
        tags,
        operationId: 'login',
        summary: 'Log in',
        description:
          'Answers a 15-minute access token and sets the 7-day refresh cookie. A wrong password and an unknown user get the same 401; ' +
          'repeated failures lock the account for a while (429 with Retry-After).',
        body: schemas.Credentials,
        querystring: schemas.LoginQuery,
        response: { 200: schemas.LoginResponse },
      },
    },
    async (request, reply) => {
      const { username, password, code } = request.body;
      const { issued, user } = await login(services, username, password, clientInfo(request), code);
      sendTokens(reply, issued);
      const includeUser = isTrue(request.query.includeUser);
      return { access_token: issued.accessToken, ...(includeUser ? { user } : {}) };
    },
  );

  app.post(
    '/logout',
    {
      config: {
        // Open to an account REQUIRE_SECOND_FACTOR sends to enrolment: it may always sign out.
        policy: { ...SIGNED_IN, enrolment: 'allowed' },
        unauthenticated: Errors.notAuthenticated,
        failureDetail: 'Failed to logout',
        docs: { noContent: true, headers: { 204: ['Set-Cookie'] } },
      },
      schema: {
        tags,
        operationId: 'logout',
        summary: 'Log out everywhere',
        description:
          'Revokes every refresh token of the caller and clears both cookies. Its access tokens are refused on /api/auth at once; ' +
          'elsewhere they stay valid until they expire.',
      },
    },
    async (request, reply) => {
      await sessions.logout(services, callerId(request), clientInfo(request));
      clearAuthCookies(reply, config);
      return reply.code(204).send();
    },
  );

  // Spec §4.1 rule 8: a safe method that only hands out a token, for a holder of a valid refresh cookie.
  app.get(
    '/cookie/csrf',
    {
      config: {
        policy: COOKIE,
        docs: { noContent: true, headers: { 204: ['X-CSRF-Token', 'Set-Cookie', 'Cache-Control'] } },
      },
      schema: {
        tags,
        operationId: 'getCsrfToken',
        summary: 'Get a CSRF token',
        description:
          'For a holder of a valid refresh cookie: the token comes in the X-CSRF-Token response header; ' +
          'send it back in the X-CSRF-Token header of POST /api/auth/cookie/refresh.',
      },
    },
    async (request, reply) => {
      const claims = services.tokens.verify(request.cookies[REFRESH_COOKIE] ?? '');
      if (claims === null || claims.type !== 'refresh') throw Errors.unauthorized();
      const token = await reply.generateCsrf();
      return reply.header('x-csrf-token', token).code(204).send();
    },
  );

  app.post(
    '/cookie/refresh',
    {
      onRequest: [
        async (request) => {
          if (config.production) assertTrustedOrigin(request, config.trustedOrigins);
        },
        app.csrfProtection,
      ],
      config: {
        policy: { ...COOKIE, limit: 'refresh' },
        failureDetail: 'Failed to generate tokens',
        docs: { headers: { 200: ['Set-Cookie', 'Cache-Control'] } },
      },
      schema: {
        tags,
        operationId: 'refresh',
        summary: 'Trade the refresh cookie for a new access token',
        description:
          'Checks CSRF first (403), then the refresh token (401). The refresh token is single use: the answer sets a new one.',
        headers: schemas.CsrfHeaders,
        response: { 200: schemas.AccessTokenResponse },
      },
    },
    async (request, reply) => {
      const issued = await sessions.refresh(services, request.cookies[REFRESH_COOKIE], clientInfo(request));
      sendTokens(reply, issued);
      return { access_token: issued.accessToken };
    },
  );
};
