import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { Type } from 'typebox';
import type { Config } from '../config.js';
import { callerClaims, callerId, subjectOf } from '../http/caller.js';
import { clientInfo } from '../http/client-info.js';
import type { RoutePolicy } from '../http/policy.js';
import { absentBodyAsEmpty, AUTH_BODY_LIMIT, isTrue } from '../http/schemas.js';
import { setAuthCookies } from '../sessions/cookies.js';
import * as sessionSchemas from '../sessions/sessions.schemas.js';
import type { Reauthenticate } from '../sessions/reauthentication.js';
import type { SessionServices } from '../sessions/sessions.service.js';
import { normalizeId } from '../shared/ids.js';
import * as schemas from './mfa.schemas.js';
import * as mfa from './mfa.service.js';
import * as passkeys from './passkeys.service.js';

export interface MfaRoutesOptions {
  config: Config;
  services: SessionServices & mfa.MfaServices;
  /** The password asked again (auth/reauthentication.service.ts, given by app.ts). */
  reauthenticate: Reauthenticate;
}

// Every route here but the administrators' is open to an account REQUIRE_SECOND_FACTOR sends to
// enrolment (`enrolment: 'allowed'`): setting up a factor is what it must do.
/** The password again (a hash per call): the password limit, as for a password change. */
const WITH_PASSWORD: RoutePolicy = {
  auth: 'access',
  limit: 'password',
  hashesPassword: true,
  noStore: true,
  enrolment: 'allowed',
};
/** A code or a passkey answer is a guess like a password: the same per-address limit, without a hash. */
const GUESSABLE: RoutePolicy = { auth: 'access', limit: 'password', noStore: true, enrolment: 'allowed' };
const SIGNED_IN: RoutePolicy = { auth: 'access', noStore: true, enrolment: 'allowed' };
const tags = ['second factor'];

/** TOTP, recovery codes and passkeys; under /api/auth. */
export const mfaRoutes: FastifyPluginAsyncTypebox<MfaRoutesOptions> = async (
  app,
  { config, services, reauthenticate },
) => {
  const web = passkeys.webAuthnSettings(config.publicUrl);

  app.post(
    '/2fa/totp',
    {
      bodyLimit: sessionSchemas.REAUTHENTICATION_BODY_LIMIT,
      config: {
        policy: WITH_PASSWORD,
        failureDetail: 'Failed to start two-step sign-in',
        docs: { errors: [404, 409] },
      },
      schema: {
        tags,
        operationId: 'startTotp',
        summary: 'Start setting up an authenticator app',
        description:
          'Answers a new secret; it counts only once POST /2fa/totp/confirm got a right code. ' +
          `Starting again replaces an unconfirmed secret; 409 while one is confirmed. ${sessionSchemas.REAUTHENTICATION_NOTE}`,
        body: sessionSchemas.ReauthenticationBody,
        response: { 200: schemas.TotpSetup },
      },
      preValidation: absentBodyAsEmpty,
    },
    async (request) =>
      mfa.startTotp(
        services,
        await reauthenticate(callerClaims(request), request.body, clientInfo(request), 'mfa_enrol'),
      ),
  );

  app.post(
    '/2fa/totp/confirm',
    {
      bodyLimit: AUTH_BODY_LIMIT,
      config: { policy: GUESSABLE, failureDetail: 'Failed to confirm two-step sign-in', docs: { errors: [409] } },
      schema: {
        tags,
        operationId: 'confirmTotp',
        summary: 'Turn the authenticator app on with a first code',
        description:
          'A right code (401 invalid_mfa_code otherwise) turns two-step sign-in on and answers 10 recovery codes, shown only here.',
        body: schemas.CodeBody,
        response: { 200: schemas.RecoveryCodes },
      },
    },
    async (request) => mfa.confirmTotp(services, callerId(request), request.body.code, clientInfo(request)),
  );

  app.delete(
    '/2fa/totp',
    {
      bodyLimit: AUTH_BODY_LIMIT,
      config: {
        policy: WITH_PASSWORD,
        failureDetail: 'Failed to turn off two-step sign-in',
        docs: { noContent: true, errors: [404, 409] },
      },
      schema: {
        tags,
        operationId: 'removeTotp',
        summary: 'Turn the authenticator app off',
        description:
          'Needs a current code (a TOTP or recovery code: 401 invalid_mfa_code) and the password again; removes the recovery codes too. ' +
          sessionSchemas.REAUTHENTICATION_NOTE,
        body: schemas.PasswordAndCodeBody,
      },
    },
    async (request, reply) => {
      const userId = callerId(request);
      await reauthenticate(
        callerClaims(request),
        { password: request.body.password },
        clientInfo(request),
        'mfa_remove',
      );
      await mfa.removeTotp(services, userId, request.body.code, clientInfo(request));
      return reply.code(204).send();
    },
  );

  app.post(
    '/2fa/recovery-codes',
    {
      bodyLimit: AUTH_BODY_LIMIT,
      config: {
        policy: WITH_PASSWORD,
        failureDetail: 'Failed to replace the recovery codes',
        docs: { errors: [404, 409] },
      },
      schema: {
        tags,
        operationId: 'replaceRecoveryCodes',
        summary: 'Replace the recovery codes',
        description:
          'Needs a current code (401 invalid_mfa_code) and the password again. The old codes stop working; the 10 new ones are shown only here. ' +
          sessionSchemas.REAUTHENTICATION_NOTE,
        body: schemas.PasswordAndCodeBody,
        response: { 200: schemas.RecoveryCodes },
      },
    },
    async (request) => {
      const userId = callerId(request);
      await reauthenticate(
        callerClaims(request),
        { password: request.body.password },
        clientInfo(request),
        'recovery_codes',
      );
      return mfa.regenerateRecoveryCodes(services, userId, request.body.code, clientInfo(request));
    },
  );

  app.post(
    '/passkeys/options',
    {
      bodyLimit: sessionSchemas.REAUTHENTICATION_BODY_LIMIT,
      config: { policy: WITH_PASSWORD, failureDetail: 'Failed to start adding a passkey', docs: { errors: [404] } },
      schema: {
        tags,
        operationId: 'passkeyCreationOptions',
        summary: 'Options for adding a passkey',
        description:
          "For navigator.credentials.create (or @simplewebauthn/browser's startRegistration). The challenge works once, for 5 minutes. " +
          'Adding a passkey needs the password again, here or with the answer (POST /passkeys). Given here, it is checked now ' +
          "(401 `reauthentication_required` when wrong; wrong ones count against this session's failure limit, 429 once it is locked) and the answer needs none.",
        // Optional: without it, the answer needs the password instead.
        body: Type.Optional(sessionSchemas.ReauthenticationBody),
        response: { 200: schemas.WebAuthnOptions },
      },
      preValidation: absentBodyAsEmpty,
    },
    async (request) => {
      const userId = callerId(request);
      const proof = request.body ?? {};
      const given = proof.password !== undefined || proof.code !== undefined;
      if (given) await reauthenticate(callerClaims(request), proof, clientInfo(request), 'mfa_enrol');
      return passkeys.registrationOptions(services, web, userId, given);
    },
  );

  app.post(
    '/passkeys',
    {
      bodyLimit: schemas.PASSKEY_BODY_LIMIT,
      config: { policy: WITH_PASSWORD, failureDetail: 'Failed to add the passkey', docs: { errors: [409] } },
      schema: {
        tags,
        operationId: 'addPasskey',
        summary: 'Add a passkey',
        description:
          "The browser's answer to the creation options, with a name. 400 when it does not answer a live challenge of this account " +
          '(each works once, for 5 minutes) or does not verify (user verification is required); 409 when that passkey is registered already. ' +
          'Needs the password again, here or with the options: 401 `reauthentication_required` when neither had it or this one is wrong ' +
          "(wrong ones count against this session's failure limit, 429 once it is locked; a challenge refused for want of the password can be answered again with it). " +
          'The body is at most 64 KiB (413 beyond), which holds every field at its documented maximum.',
        body: schemas.RegisterPasskeyBody,
        response: { 201: schemas.PasskeySchema },
      },
    },
    async (request, reply) => {
      const { name, credential, password } = request.body;
      const userId = callerId(request);
      if (password !== undefined)
        await reauthenticate(callerClaims(request), { password }, clientInfo(request), 'mfa_enrol');
      const passkey = await passkeys.registerPasskey(
        services,
        web,
        userId,
        name.trim(),
        credential as RegistrationResponseJSON,
        clientInfo(request),
        password !== undefined,
      );
      return reply.code(201).send(passkey);
    },
  );

  app.get(
    '/passkeys',
    {
      config: { policy: SIGNED_IN, failureDetail: 'Failed to list passkeys' },
      schema: {
        tags,
        operationId: 'listPasskeys',
        summary: "The caller's passkeys",
        description: 'Oldest first.',
        response: { 200: Type.Array(schemas.PasskeySchema) },
      },
    },
    async (request) => passkeys.listPasskeys(services, callerId(request)),
  );

  app.delete(
    '/passkeys/:id',
    {
      bodyLimit: sessionSchemas.REAUTHENTICATION_BODY_LIMIT,
      config: {
        policy: WITH_PASSWORD,
        failureDetail: 'Failed to remove the passkey',
        docs: { noContent: true, errors: [404] },
      },
      schema: {
        tags,
        operationId: 'deletePasskey',
        summary: 'Remove a passkey',
        description: sessionSchemas.REAUTHENTICATION_NOTE,
        params: schemas.PasskeyParams,
        body: sessionSchemas.ReauthenticationBody,
      },
      preValidation: absentBodyAsEmpty,
    },
    async (request, reply) => {
      const userId = callerId(request);
      await reauthenticate(callerClaims(request), request.body, clientInfo(request), 'mfa_remove');
      await passkeys.deletePasskey(services, userId, normalizeId(request.params.id), clientInfo(request));
      return reply.code(204).send();
    },
  );

  app.post(
    '/passkey/options',
    {
      config: {
        policy: { auth: 'public', limit: 'password', noStore: true },
        failureDetail: 'Failed to start a passkey login',
      },
      schema: {
        tags,
        operationId: 'passkeyLoginOptions',
        summary: 'Options for signing in with a passkey',
        description:
          'For navigator.credentials.get (or startAuthentication): any passkey of this site, user verification required. The challenge works once, for 5 minutes.',
        response: { 200: schemas.WebAuthnOptions },
      },
    },
    async () => passkeys.loginOptions(services, web),
  );

  app.post(
    '/passkey/login',
    {
      bodyLimit: schemas.PASSKEY_BODY_LIMIT,
      config: {
        policy: { auth: 'public', limit: 'password', noStore: true },
        failureDetail: 'Failed to generate tokens',
        docs: { errors: [401], headers: { 200: ['Set-Cookie', 'Cache-Control'] } },
      },
      schema: {
        tags,
        operationId: 'passkeyLogin',
        summary: 'Sign in with a passkey',
        description:
          'Answers exactly as POST /api/auth/login does; no further factor is asked. Every refusal is 401 Invalid credentials. ' +
          'The body is at most 64 KiB (413 beyond), which holds every field at its documented maximum.',
        body: schemas.PasskeyLoginBody,
        querystring: sessionSchemas.LoginQuery,
        response: { 200: sessionSchemas.LoginResponse },
      },
    },
    async (request, reply) => {
      const { issued, user } = await passkeys.passkeyLogin(
        services,
        web,
        request.body.credential as AuthenticationResponseJSON,
        clientInfo(request),
      );
      setAuthCookies(reply, config, issued.refreshToken, issued.refreshExpiresAt);
      return { access_token: issued.accessToken, ...(isTrue(request.query.includeUser) ? { user } : {}) };
    },
  );

  app.delete(
    '/admin/:id/mfa',
    {
      config: {
        policy: { auth: 'admin', noStore: true },
        failureDetail: 'Failed to remove second factors',
        docs: { noContent: true, errors: [404] },
      },
      schema: {
        tags: ['admin'],
        operationId: 'removeUserFactors',
        summary: "Remove a user's second factors",
        description:
          'For a user who lost their phone and their recovery codes: removes the authenticator app, the recovery codes and every passkey. Audited.',
        params: Type.Object({ id: schemas.PasskeyParams.properties.id }),
      },
    },
    async (request, reply) => {
      await mfa.adminRemoveFactors(
        services,
        subjectOf(callerClaims(request)),
        normalizeId(request.params.id),
        clientInfo(request),
      );
      return reply.code(204).send();
    },
  );
};
