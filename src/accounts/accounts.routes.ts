import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { Errors } from '../errors.js';
import { parsePage } from '../http/pagination.js';
import { PaginationQuery } from '../http/schemas.js';
import { normalizeId } from '../shared/ids.js';
import { auditRoutes } from '../audit/audit.routes.js';
import * as schemas from './accounts.schemas.js';
import * as auth from './accounts.service.js';
import type { AuthHooks } from '../http/access.js';
import { clearAuthCookies, REFRESH_COOKIE, setAuthCookies } from '../sessions/cookies.js';
import { assertTrustedOrigin } from '../sessions/origin-check.js';
import { sessionRoutes } from '../sessions/sessions.routes.js';

export interface AuthRoutesOptions {
  config: Config;
  services: auth.AuthServices;
  hooks: AuthHooks;
}

/** Small bodies only: the largest legitimate one is two 256-character passwords, JSON-escaped. */
const AUTH_BODY_LIMIT = 16 * 1024;

const clientInfo = (request: FastifyRequest): auth.ClientInfo => ({
  userAgent: request.headers['user-agent'],
  ip: request.ip,
});

export const authRoutes: FastifyPluginAsyncTypebox<AuthRoutesOptions> = async (app, { config, services, hooks }) => {
  app.addHook('onSend', async (_request, reply) => {
    // Tokens and account data must never sit in a shared or browser cache.
    reply.header('cache-control', 'no-store');
  });

  // Child plugins: same /api/auth prefix, same no-store header.
  await app.register(sessionRoutes, { services, hooks, clientInfo });
  await app.register(auditRoutes, { services, hooks });

  const sendTokens = (reply: FastifyReply, issued: auth.IssuedTokens) =>
    setAuthCookies(reply, config, issued.refreshToken, issued.refreshExpiresAt);

  app.post('/signup', {
    bodyLimit: AUTH_BODY_LIMIT,
    config: { failureDetail: 'Failed to create user' },
    schema: {
      operationId: 'signup',
      summary: 'Create an account',
      description: 'The username is lower-cased, then checked; then the password: length, breach check, entropy. 409 when the name is taken.',
      body: schemas.signupBody(config.passwordMinLength),
      response: { 201: schemas.SignupResponse },
    },
  }, async (request, reply) => {
    const created = await auth.signup(services, request.body.username, request.body.password, clientInfo(request));
    return reply.code(201).send(created);
  });

  app.post('/login', {
    bodyLimit: AUTH_BODY_LIMIT,
    config: { failureDetail: 'Failed to generate tokens', docs: { headers: { 200: ['Set-Cookie', 'Cache-Control'] } } },
    schema: {
      operationId: 'login',
      summary: 'Log in',
      description: 'Answers a 15-minute access token and sets the 7-day refresh cookie. A wrong password and an unknown user get the same 401; '
        + 'repeated failures lock the account for a while (429 with Retry-After).',
      body: schemas.Credentials,
      querystring: schemas.LoginQuery,
      response: { 200: schemas.LoginResponse },
    },
  }, async (request, reply) => {
    const { issued, user } = await auth.login(services, request.body.username, request.body.password, clientInfo(request));
    sendTokens(reply, issued);
    const includeUser = schemas.parseBooleanString(request.query.includeUser);
    return { access_token: issued.accessToken, ...(includeUser ? { user } : {}) };
  });

  app.get('/me', {
    onRequest: hooks.access,
    config: { failureDetail: 'Failed to retrieve user' },
    schema: { operationId: 'getMe', summary: 'The caller\'s account', response: { 200: schemas.UserSchema } },
  }, async (request) => auth.getUser(services, request.claims!));

  app.post('/logout', {
    onRequest: hooks.access,
    config: { unauthenticated: Errors.notAuthenticated, failureDetail: 'Failed to logout', docs: { headers: { 204: ['Set-Cookie'] } } },
    schema: {
      operationId: 'logout',
      summary: 'Log out everywhere',
      description: 'Revokes every refresh token of the caller and clears both cookies. Access tokens stay valid until they expire.',
    },
  }, async (request, reply) => {
    await auth.logout(services, request.claims!, clientInfo(request));
    clearAuthCookies(reply, config);
    return reply.code(204).send();
  });

  for (const url of ['/owner/', '/owner']) {
    app.put(url, {
      onRequest: hooks.access,
      bodyLimit: AUTH_BODY_LIMIT,
      config: { failureDetail: 'Failed to update password', docs: { headers: { 200: ['Set-Cookie', 'Cache-Control'] } } },
      schema: {
        operationId: 'changePassword',
        summary: 'Change the caller\'s password',
        description: 'Checks the old password (401), validates the new one like signup (400), ends every other session and issues a new pair.',
        body: schemas.ChangePasswordBody,
        response: { 200: schemas.ChangePasswordResponse },
      },
    }, async (request, reply) => {
      const { old_password, new_password } = request.body;
      const { issued, user } = await auth.changePassword(services, request.claims!, old_password, new_password, clientInfo(request));
      sendTokens(reply, issued);
      return { access_token: issued.accessToken, user };
    });

    app.delete(url, {
      onRequest: hooks.access,
      bodyLimit: AUTH_BODY_LIMIT,
      config: { failureDetail: 'Failed to delete user', docs: { headers: { 204: ['Set-Cookie'] } } },
      schema: {
        operationId: 'deleteOwnAccount',
        summary: 'Delete the caller\'s account',
        description: 'Needs the password. Deletes the account with every note, ends its sessions and clears the cookies.',
        body: schemas.DeleteOwnerBody,
      },
    }, async (request, reply) => {
      await auth.deleteOwnAccount(services, request.claims!, request.body.password, clientInfo(request));
      clearAuthCookies(reply, config);
      return reply.code(204).send();
    });
  }

  app.get('/admin/all', {
    onRequest: hooks.admin,
    config: { failureDetail: 'Failed to retrieve users' },
    schema: {
      operationId: 'listUsers',
      summary: 'List accounts',
      description: 'Every account, ordered by creation time then id; an empty page is null (spec).',
      querystring: PaginationQuery,
      response: { 200: schemas.UserPage },
    },
  }, async (request) => {
    const { limit, offset } = parsePage(request.query);
    return auth.listUsers(services, request.claims!, limit, offset, clientInfo(request));
  });

  app.delete('/admin/:id', {
    onRequest: hooks.admin,
    config: { failureDetail: 'Failed to delete user' },
    schema: {
      operationId: 'deleteUser',
      summary: 'Delete an account',
      description: 'Deletes the account with every note and ends its sessions; 404 for an unknown id.',
      params: schemas.UserIdParams,
    },
  }, async (request, reply) => {
    await auth.adminDeleteUser(services, request.claims!, normalizeId(request.params.id), clientInfo(request));
    return reply.code(204).send();
  });

  // Spec §4.1 rule 8: a safe method that only hands out a token, for a holder of a valid refresh cookie.
  app.get('/cookie/csrf', {
    config: { docs: { headers: { 204: ['X-CSRF-Token', 'Set-Cookie', 'Cache-Control'] } } },
    schema: {
      operationId: 'getCsrfToken',
      summary: 'Get a CSRF token',
      description: 'For a holder of a valid refresh cookie: the token comes in the X-CSRF-Token response header; '
        + 'send it back in the X-CSRF-Token header of POST /api/auth/cookie/refresh.',
    },
  }, async (request, reply) => {
    const claims = services.tokens.verify(request.cookies[REFRESH_COOKIE] ?? '');
    if (claims === null || claims.type !== 'refresh') throw Errors.unauthorized();
    const token = await reply.generateCsrf();
    return reply.header('x-csrf-token', token).code(204).send();
  });

  app.post('/cookie/refresh', {
    onRequest: [
      async (request) => {
        if (config.production) assertTrustedOrigin(request, config.trustedOrigins);
      },
      app.csrfProtection,
    ],
    config: { failureDetail: 'Failed to generate tokens', docs: { headers: { 200: ['Set-Cookie', 'Cache-Control'] } } },
    schema: {
      operationId: 'refresh',
      summary: 'Trade the refresh cookie for a new access token',
      description: 'Checks CSRF first (403), then the refresh token (401). The refresh token is single use: the answer sets a new one.',
      headers: schemas.CsrfHeaders,
      response: { 200: schemas.AccessTokenResponse },
    },
  }, async (request, reply) => {
    const issued = await auth.refresh(services, request.cookies[REFRESH_COOKIE], clientInfo(request));
    sendTokens(reply, issued);
    return { access_token: issued.accessToken };
  });
};
