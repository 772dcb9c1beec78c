import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { UserIdParams, UserSchema } from '../accounts/accounts.schemas.js';
import { callerClaims, subjectOf } from '../http/caller.js';
import { clientInfo } from '../http/client-info.js';
import { AUTH_BODY_LIMIT } from '../http/schemas.js';
import type { Reauthenticate } from '../sessions/reauthentication.js';
import { normalizeId } from '../shared/ids.js';
import * as schemas from './recovery.schemas.js';
import * as recovery from './recovery.service.js';

export interface RecoveryRoutesOptions {
  services: recovery.RecoveryServices;
  reauthenticate: Reauthenticate;
}

const tags = ['auth'];
/** The same answer whoever asks (accounts/… never tells whether a login exists). */
const RESET_ACCEPTED = {
  status: 'accepted' as const,
  message: 'If this account has a verified e-mail address, a link to choose a new password is on its way.',
};

/** Password reset and the e-mail address; under /api/auth. */
export const recoveryRoutes: FastifyPluginAsyncTypebox<RecoveryRoutesOptions> = async (
  app,
  { services, reauthenticate },
) => {
  app.post(
    '/password-reset',
    {
      bodyLimit: AUTH_BODY_LIMIT,
      config: { policy: { auth: 'public', limit: 'password', noStore: true } },
      schema: {
        tags,
        operationId: 'requestPasswordReset',
        summary: 'Ask for a password reset link',
        description:
          'Always 202 with the same body, whether or not the account exists (both cases do the same work; the mail goes out ' +
          'after the answer). With SMTP_URL set and a verified address, mails `{PUBLIC_URL}/reset?token=…`, valid 30 minutes, ' +
          'single use; a newer link voids older ones. Limited like login (RATE_LIMIT_LOGIN_PER_MINUTE per address).',
        body: schemas.ResetRequestBody,
        response: { 202: schemas.ResetRequestResponse },
      },
    },
    async (request, reply) => {
      await recovery.requestPasswordReset(services, request.body.login, clientInfo(request));
      return reply.code(202).send(RESET_ACCEPTED);
    },
  );

  app.post(
    '/password-reset/confirm',
    {
      bodyLimit: AUTH_BODY_LIMIT,
      config: {
        policy: { auth: 'public', limit: 'password', hashesPassword: true, noStore: true },
        failureDetail: 'Failed to update password',
      },
      schema: {
        tags,
        operationId: 'confirmPasswordReset',
        summary: 'Choose a new password with a reset link',
        description:
          'new_password must pass every rule of signup (400 each, checked before the link is used, so a refused password ' +
          'does not spend it); an unknown, expired or used token is 400 invalid_link. Then, like a password change, every ' +
          'session of the account ends; its second factors stay. Answers the account; sign in again with the new password.',
        body: schemas.ResetConfirmBody,
        response: { 200: UserSchema },
      },
    },
    async (request) =>
      recovery.confirmPasswordReset(services, request.body.token, request.body.new_password, clientInfo(request)),
  );

  app.post(
    '/admin/:id/password-reset',
    {
      config: { policy: { auth: 'admin', noStore: true }, docs: { errors: [404] } },
      schema: {
        tags: ['admin'],
        operationId: 'adminPasswordReset',
        summary: 'Make a password reset link for an account',
        description:
          'The same single-use 30-minute link a reset request mails, answered to the administrator to hand over (nothing is ' +
          "mailed). Voids the account's older reset links. Audited.",
        params: UserIdParams,
        response: { 200: schemas.ResetLink },
      },
    },
    async (request) =>
      recovery.adminPasswordReset(
        services,
        subjectOf(callerClaims(request)),
        normalizeId(request.params.id),
        clientInfo(request),
      ),
  );

  for (const url of ['/owner/email', '/owner/email/']) {
    app.put(
      url,
      {
        bodyLimit: AUTH_BODY_LIMIT,
        config: {
          policy: { auth: 'access', limit: 'password', hashesPassword: true, noStore: true },
          docs: { errors: [404, 409] },
        },
        schema: {
          tags,
          operationId: 'changeEmail',
          summary: "Set or remove the caller's e-mail address",
          description:
            'Needs the password (an account without one: `code`), else 401 reauthentication_required. `email: null` removes ' +
            'the address at once (200, the account). An address gets a confirmation link, `{PUBLIC_URL}/confirm-email?token=…` ' +
            'valid 24 hours, and is set only when it is followed (202); 400 invalid_email for a malformed one, 409 ' +
            'mail_unavailable when the server sends no mail (no SMTP_URL).',
          body: schemas.EmailChangeBody,
          response: { 200: UserSchema, 202: schemas.EmailPending },
        },
      },
      async (request, reply) => {
        const client = clientInfo(request);
        const row = await reauthenticate(callerClaims(request), request.body, client, 'email_change');
        const outcome = await recovery.requestEmailChange(services, row, request.body.email, client);
        if ('removed' in outcome) return reply.code(200).send(outcome.removed);
        return reply.code(202).send(outcome.pending);
      },
    );
  }

  app.post(
    '/owner/email/confirm',
    {
      bodyLimit: AUTH_BODY_LIMIT,
      config: { policy: { auth: 'public', limit: 'password', noStore: true }, docs: { errors: [409] } },
      schema: {
        tags,
        operationId: 'confirmEmail',
        summary: 'Confirm an e-mail address with its link',
        description:
          'Sets the address the link was sent for; no sign-in needed (the link may be opened on another device). ' +
          '400 invalid_link when unknown, expired or used; 409 email_taken when another account confirmed the address first.',
        body: schemas.EmailConfirmBody,
        response: { 200: UserSchema },
      },
    },
    async (request) => recovery.confirmEmail(services, request.body.token, clientInfo(request)),
  );
};
