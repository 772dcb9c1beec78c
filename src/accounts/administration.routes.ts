import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../config.js';
import { callerClaims, subjectOf } from '../http/caller.js';
import { clientInfo } from '../http/client-info.js';
import type { RoutePolicy } from '../http/policy.js';
import { AUTH_BODY_LIMIT } from '../http/schemas.js';
import { normalizeId } from '../shared/ids.js';
import type { AccountServices } from './accounts.service.js';
import type { SessionCookies } from './accounts.routes.js';
import * as schemas from './accounts.schemas.js';
import * as administration from './administration.service.js';
import type { Mailer } from '../mail/mailer.js';

export interface AdministrationRoutesOptions {
  config: Config;
  services: AccountServices;
  cookies: SessionCookies;
  facts: administration.FindAccountFacts;
  /** Mails a set-up link to the address an administrator gave (SMTP_URL); absent or off: nothing is mailed. */
  mailer?: Mailer;
}

const ADMIN: RoutePolicy = { auth: 'admin', noStore: true };
const tags = ['admin'];

/**
 * Running it for a team: what the sign-in pages may show, accounts an administrator creates (and
 * their set-up links), and an administrator's changes to an account; under /api/auth.
 */
export const administrationRoutes: FastifyPluginAsyncTypebox<AdministrationRoutesOptions> = async (
  app,
  { config, services, cookies, facts, mailer },
) => {
  app.get(
    '/config',
    {
      config: { policy: { auth: 'public', enrolment: 'allowed' } },
      schema: {
        tags: ['auth'],
        operationId: 'getAuthConfig',
        summary: 'How people sign in and sign up here',
        description:
          'From the configuration (SIGNUP, PASSWORD_LOGIN, OIDC_*), so the login and sign-up pages show only what is allowed.',
        response: { 200: schemas.AuthConfigSchema },
      },
    },
    async () => ({
      signup: config.signup,
      password_login: config.passwordLogin,
      oidc: config.oidc === null ? null : { name: config.oidc.name },
      passkeys: true as const,
    }),
  );

  app.post(
    '/setup',
    {
      bodyLimit: AUTH_BODY_LIMIT,
      config: {
        policy: { auth: 'public', limit: 'password', hashesPassword: true, noStore: true },
        failureDetail: 'Failed to set the password',
        docs: { headers: { 200: ['Set-Cookie', 'Cache-Control'] } },
      },
      schema: {
        tags: ['auth'],
        operationId: 'completeSetup',
        summary: 'Choose the password of an account an administrator created',
        description:
          'With the `token` of a set-up link (POST /auth/admin/users, POST /auth/admin/{id}/setup-link): single use, valid 7 ' +
          "days; an unknown, used, replaced or expired one is 400 setup_link_invalid. The password follows signup's rules " +
          '(a 400 each). Signs the account in as a login does: an access token, and the refresh cookie.',
        body: schemas.SetupBody,
        response: { 200: schemas.SetupResponse },
      },
    },
    async (request, reply) => {
      const { issued, user } = await administration.completeSetup(
        services,
        request.body.token,
        request.body.password,
        clientInfo(request),
      );
      cookies.set(reply, issued);
      return { access_token: issued.accessToken, user };
    },
  );

  app.post(
    '/admin/users',
    {
      bodyLimit: AUTH_BODY_LIMIT,
      config: { policy: ADMIN, failureDetail: 'Failed to create user', docs: { errors: [409] } },
      schema: {
        tags,
        operationId: 'adminCreateUser',
        summary: 'Create an account',
        description:
          'An account without a password (400 for a username signup would refuse, 409 when taken), and `setup_url`, ' +
          '`{PUBLIC_URL}/setup?token=…`: a single-use link, valid 7 days, where the person chooses a password (POST /auth/setup). ' +
          'Hand it over; the token is in this answer only. With `email` and SMTP_URL set, the link is also mailed there ' +
          "(the address does not become the account's: its owner confirms one). 403 when the caller is not an administrator.",
        body: schemas.AdminCreateUserBody,
        response: { 201: schemas.AdminCreatedUser },
      },
    },
    async (request, reply) => {
      const created = await administration.adminCreateUser(
        mailer === undefined ? services : { ...services, mailer },
        config.publicUrl,
        subjectOf(callerClaims(request)),
        { username: request.body.username, email: request.body.email, admin: request.body.admin },
        clientInfo(request),
      );
      return reply.code(201).send(created);
    },
  );

  app.post(
    '/admin/:id/setup-link',
    {
      config: { policy: ADMIN, failureDetail: 'Failed to create the set-up link', docs: { errors: [404, 409] } },
      schema: {
        tags,
        operationId: 'adminSetupLink',
        summary: 'A new set-up link',
        description:
          'For an account that has no password yet (409 account_has_password otherwise; that is a password reset): a new ' +
          'single-use link, valid 7 days; the earlier one stops working.',
        params: schemas.UserIdParams,
        response: { 201: schemas.SetupLink },
      },
    },
    async (request, reply) => {
      const link = await administration.adminSetupLink(
        services,
        config.publicUrl,
        subjectOf(callerClaims(request)),
        normalizeId(request.params.id),
        clientInfo(request),
      );
      return reply.code(201).send(link);
    },
  );

  app.get(
    '/admin/:id',
    {
      config: { policy: ADMIN, failureDetail: 'Failed to retrieve user' },
      schema: {
        tags,
        operationId: 'adminGetUser',
        summary: 'One account',
        description:
          'The account exactly as its row in GET /auth/admin/all reads (the User fields, e-mail, disabled, second factors, last ' +
          'login, storage used and own quota). 404 user_not_found for an unknown id; a malformed one is 400, as on PATCH and ' +
          'DELETE. Audited (admin_view_user), as the list is. 403 when the caller is not an administrator.',
        params: schemas.UserIdParams,
        response: { 200: schemas.AdminUserSchema },
      },
    },
    async (request) =>
      administration.getAdminUser(
        services,
        facts,
        subjectOf(callerClaims(request)),
        normalizeId(request.params.id),
        clientInfo(request),
      ),
  );

  app.patch(
    '/admin/:id',
    {
      bodyLimit: AUTH_BODY_LIMIT,
      config: { policy: ADMIN, failureDetail: 'Failed to update user', docs: { errors: [404, 409] } },
      schema: {
        tags,
        operationId: 'adminUpdateUser',
        summary: 'Change an account',
        description:
          'Any of `is_admin`, `disabled`, `storage_quota_bytes`. Disabling ends every session of the account at once (its ' +
          'refresh cookie fails, its live event streams end, access tokens are refused on /api/auth and WebDAV at once and ' +
          'elsewhere run out within their 15 minutes), its personal access tokens stop working and a login is refused like a ' +
          'wrong password; enabling lets it sign in again. 409 last_administrator when the change would leave no enabled ' +
          'administrator. Answers the account as GET /auth/admin/all shows it. 403 when the caller is not an administrator.',
        params: schemas.UserIdParams,
        body: schemas.AdministrationBody,
        response: { 200: schemas.AdminUserSchema },
      },
    },
    async (request) =>
      administration.adminUpdateUser(
        services,
        facts,
        subjectOf(callerClaims(request)),
        normalizeId(request.params.id),
        request.body,
        clientInfo(request),
      ),
  );
};
