import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import type { Config } from '../config.js';
import { callerClaims, callerId, subjectOf } from '../http/caller.js';
import { clientInfo } from '../http/client-info.js';
import type { RoutePolicy } from '../http/policy.js';
import { AUTH_BODY_LIMIT, PaginationQuery, pageOf } from '../http/schemas.js';
import { normalizeId } from '../shared/ids.js';
import * as schemas from './accounts.schemas.js';
import * as accounts from './accounts.service.js';
import * as administration from './administration.service.js';
import type { FindAccountFacts } from './administration.service.js';
import { PASSWORD_MAX_LENGTH } from '../passwords/password-policy.js';

/** The auth cookies (sessions/cookies.ts), set and cleared as sessions start and end. */
export interface SessionCookies {
  set(reply: FastifyReply, issued: accounts.NewSession): void;
  clear(reply: FastifyReply): void;
}

export interface AccountRoutesOptions {
  config: Config;
  services: accounts.AccountServices;
  cookies: SessionCookies;
  /** The second factors a user has set up, for GET /me (mfa/mfa.service.ts, mfaStatus). */
  factors: (userId: string) => Promise<{ totp: boolean; passkeys: number }>;
  /** Whether REQUIRE_SECOND_FACTOR still sends the user to enrolment (mfa/mfa.service.ts, enrolmentRequired). */
  enrolmentRequired: (userId: string) => Promise<boolean>;
  /** What administrators see of accounts besides their row (mfa, attachments; given by app.ts). */
  facts: FindAccountFacts;
}

/** The caller's own account, with its password checked: a hash per call, so the password limit. */
const OWNER_WITH_PASSWORD: RoutePolicy = { auth: 'access', limit: 'password', hashesPassword: true, noStore: true };
const ADMIN: RoutePolicy = { auth: 'admin', noStore: true };
const tags = ['auth'];

/** Accounts: signup, the caller's own account, and the administrators' view of all; under /api/auth. */
export const accountRoutes: FastifyPluginAsyncTypebox<AccountRoutesOptions> = async (
  app,
  { config, services, cookies, factors, enrolmentRequired, facts },
) => {
  app.post(
    '/signup',
    {
      bodyLimit: AUTH_BODY_LIMIT,
      config: {
        policy: { auth: 'public', limit: 'signup', hashesPassword: true, noStore: true },
        failureDetail: 'Failed to create user',
        docs: { errors: [403, 409] },
      },
      schema: {
        tags,
        operationId: 'signup',
        summary: 'Create an account',
        description:
          'First SIGNUP (GET /auth/config says it): with `invite`, 403 invitation_required without a valid `invitation`; with ' +
          '`closed`, 403 signup_closed without one. A valid invitation works in every mode, once, and makes an administrator ' +
          'when it says so. With PASSWORD_LOGIN=off, 403 password_login_disabled (no password would sign such an account ' +
          "in), except with an invitation that makes an administrator. Then the username is lower-cased and checked; then the password's length (both as the body schema " +
          'states), then the breach check and entropy, which no schema can state (each a 400 with its own message). 409 when ' +
          'the name is taken.',
        body: schemas.signupBody(config.passwordMinLength),
        response: { 201: schemas.SignupResponse },
      },
    },
    async (request, reply) => {
      const created = await accounts.signup(
        services,
        request.body.username,
        request.body.password,
        clientInfo(request),
        {
          mode: config.signup,
          invitation: request.body.invitation,
          welcome: request.body.welcome_note === true,
          passwordLogin: config.passwordLogin,
        },
      );
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/password-rules',
    {
      config: { policy: { auth: 'public' } },
      schema: {
        tags,
        operationId: 'getPasswordRules',
        summary: 'The password rules of this server',
        description:
          'What signup and a password change require, from the configuration, so a client shows the same rules as it checks ' +
          'as the user types. The breach check itself happens only on the server.',
        response: { 200: schemas.PasswordRulesSchema },
      },
    },
    async () => ({
      min_length: config.passwordMinLength,
      max_length: PASSWORD_MAX_LENGTH,
      min_entropy_bits: config.passwordMinEntropy,
      breach_check: config.pwnedPasswordsUrl === null ? ('offline-list' as const) : ('range-api' as const),
    }),
  );

  app.post(
    '/password-rules/check',
    {
      bodyLimit: AUTH_BODY_LIMIT,
      config: { policy: { auth: 'public', limit: 'breach-check', noStore: true } },
      schema: {
        tags,
        operationId: 'checkPassword',
        summary: 'Whether a password is known from a data breach',
        description:
          'The breach check of signup and a password change, alone, so a client can say it as the user types (the other ' +
          "rules are in GET /password-rules). Only the first 5 hex digits of the password's SHA-1 leave the server; nothing is kept. " +
          'Limited per address (RATE_LIMIT_BREACH_CHECKS_PER_MINUTE, 30 by default): 429 with Retry-After past it.',
        body: schemas.PasswordCheckBody,
        response: { 200: schemas.PasswordCheckResponse },
      },
    },
    async (request) => ({ breached: (await services.policy.breaches.check(request.body.password)) === 'breached' }),
  );

  app.get(
    '/me',
    {
      // Allowed while REQUIRE_SECOND_FACTOR waits for enrolment: it is where the client learns that.
      // 404: the account was deleted while its access token is still valid.
      config: {
        policy: { auth: 'access', noStore: true, enrolment: 'allowed' },
        failureDetail: 'Failed to retrieve user',
        docs: { errors: [404] },
      },
      schema: {
        tags,
        operationId: 'getMe',
        summary: "The caller's account",
        description:
          'With `mfa`: the second factors set up; `mfa_enrolment_required`: REQUIRE_SECOND_FACTOR sends this account to set one up first; `has_password`: false for an account without a password (single sign-on, or made by an administrator), which confirms sensitive changes with `code` or `credential` instead.',
        response: { 200: schemas.MeSchema },
      },
    },
    async (request) => {
      const userId = callerId(request);
      const { has_password: hasPassword, ...user } = await accounts.getOwnAccount(services, userId);
      const [mfa, mfaEnrolmentRequired] = await Promise.all([factors(userId), enrolmentRequired(userId)]);
      return { ...user, mfa, mfa_enrolment_required: mfaEnrolmentRequired, has_password: hasPassword };
    },
  );

  for (const url of ['/owner/', '/owner']) {
    app.put(
      url,
      {
        bodyLimit: AUTH_BODY_LIMIT,
        config: {
          policy: OWNER_WITH_PASSWORD,
          failureDetail: 'Failed to update password',
          docs: { errors: [404], headers: { 200: ['Set-Cookie', 'Cache-Control'] } },
        },
        schema: {
          tags,
          operationId: 'changePassword',
          summary: "Change the caller's password",
          description:
            "Checks the old password first (401; wrong ones count against this session's failure limit, 429 once it is locked), " +
            "then new_password with every rule of signup's password: " +
            `${config.passwordMinLength} to ${PASSWORD_MAX_LENGTH} characters (code points), not in a breached-password list, enough entropy ` +
            '(a 400 each, with its own message; not in the body schema, because the 401 comes first). ' +
            'Ends every other session and issues a new pair.',
          body: schemas.ChangePasswordBody,
          response: { 200: schemas.ChangePasswordResponse },
        },
      },
      async (request, reply) => {
        const { old_password, new_password } = request.body;
        const { issued, user } = await accounts.changePassword(
          services,
          callerClaims(request),
          old_password,
          new_password,
          clientInfo(request),
        );
        cookies.set(reply, issued);
        return { access_token: issued.accessToken, user };
      },
    );

    app.delete(
      url,
      {
        bodyLimit: AUTH_BODY_LIMIT,
        config: {
          policy: OWNER_WITH_PASSWORD,
          failureDetail: 'Failed to delete user',
          docs: { errors: [404, 409], headers: { 204: ['Set-Cookie'] } },
        },
        schema: {
          tags,
          operationId: 'deleteOwnAccount',
          summary: "Delete the caller's account",
          description:
            "Needs the password (401 when wrong; wrong ones count against this session's failure limit, 429 once it is locked). " +
            'Deletes the account with every note, ends its sessions and clears the cookies. ' +
            'The last administrator cannot delete itself (409).',
          body: schemas.DeleteOwnerBody,
        },
      },
      async (request, reply) => {
        await accounts.deleteOwnAccount(services, callerClaims(request), request.body.password, clientInfo(request));
        cookies.clear(reply);
        return reply.code(204).send();
      },
    );
  }

  app.get(
    '/admin/all',
    {
      config: { policy: ADMIN, failureDetail: 'Failed to retrieve users' },
      schema: {
        tags: ['admin'],
        operationId: 'listUsers',
        summary: 'List accounts',
        description:
          'Every account, ordered by creation time then id; an empty page is null (spec). Each row adds to the User fields its ' +
          'e-mail, whether it is disabled, its second factors, last login, attachment storage used and own quota.',
        querystring: PaginationQuery,
        response: { 200: schemas.UserPage },
      },
    },
    async (request) => {
      const { limit, offset } = pageOf(request.query);
      return administration.listAdminUsers(
        services,
        facts,
        subjectOf(callerClaims(request)),
        limit,
        offset,
        clientInfo(request),
      );
    },
  );

  app.delete(
    '/admin/:id',
    {
      config: { policy: ADMIN, failureDetail: 'Failed to delete user', docs: { errors: [409] } },
      schema: {
        tags: ['admin'],
        operationId: 'deleteUser',
        summary: 'Delete an account',
        description:
          'Deletes the account with every note and ends its sessions; 404 for an unknown id, 409 for the last administrator.',
        params: schemas.UserIdParams,
      },
    },
    async (request, reply) => {
      await accounts.adminDeleteUser(
        services,
        subjectOf(callerClaims(request)),
        normalizeId(request.params.id),
        clientInfo(request),
      );
      return reply.code(204).send();
    },
  );
};
