import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../config.js';
import { AppError, Errors } from '../errors.js';
import { clientInfo } from '../http/client-info.js';
import { setAuthCookies } from '../sessions/cookies.js';
import type { OidcClient, PendingLogin } from './oidc-client.js';
import { signInWithOidc, type OidcServices } from './oidc.service.js';

export interface OidcRoutesOptions {
  config: Config;
  services: OidcServices;
  /** Null when single sign-on is not configured: both routes answer 404 oidc_disabled. */
  oidc: OidcClient | null;
}

/** State, nonce and PKCE verifier between the two routes: signed, HttpOnly, only sent to /api/auth/oidc, 10 minutes. */
export const OIDC_COOKIE = 'app.oidc';
const OIDC_COOKIE_PATH = '/api/auth/oidc';
const PENDING_SECONDS = 600;
const tags = ['auth'];

const Redirect = (description: string) => Type.Null({ description });

/** Single sign-on with an OpenID Connect provider; under /api/auth. */
export const oidcRoutes: FastifyPluginAsyncTypebox<OidcRoutesOptions> = async (app, { config, services, oidc }) => {
  const cookieOptions = {
    path: OIDC_COOKIE_PATH,
    httpOnly: true,
    // Lax, not Strict: the callback is a top-level navigation coming back from the provider's site.
    sameSite: 'lax' as const,
    secure: config.production,
    signed: true,
    ...(config.cookieDomain === undefined ? {} : { domain: config.cookieDomain }),
  };
  const clearPending = (reply: FastifyReply) =>
    reply.setCookie(OIDC_COOKIE, '', { ...cookieOptions, maxAge: 0, expires: new Date(0) });

  const readPending = (request: FastifyRequest): PendingLogin | undefined => {
    const header = request.headers.cookie;
    if (header === undefined) return undefined;
    const raw = app.parseCookie(header)[OIDC_COOKIE];
    if (raw === undefined) return undefined;
    const unsigned = app.unsignCookie(raw);
    if (!unsigned.valid || unsigned.value === null) return undefined;
    try {
      const value = JSON.parse(Buffer.from(unsigned.value, 'base64url').toString('utf8')) as Record<string, unknown>;
      const { state, nonce, verifier, exp, invitation } = value;
      if (typeof state !== 'string' || typeof nonce !== 'string' || typeof verifier !== 'string') return undefined;
      if (typeof exp !== 'number' || exp < Date.now()) return undefined;
      if (invitation !== undefined && typeof invitation !== 'string') return undefined;
      return { state, nonce, verifier, ...(invitation === undefined ? {} : { invitation }) };
    } catch {
      return undefined;
    }
  };

  app.get(
    '/oidc/login',
    {
      config: {
        policy: { auth: 'public', limit: 'password', noStore: true },
        docs: { errors: [404, 502], headers: { 302: ['Location', 'Set-Cookie'] } },
      },
      schema: {
        tags,
        operationId: 'oidcLogin',
        summary: 'Start single sign-on',
        description:
          "A browser navigation, not an API call: 302 to the OpenID Connect provider's authorization endpoint (code flow with " +
          'PKCE S256, a fresh `state` and `nonce`, kept for 10 minutes in the signed HttpOnly cookie `app.oidc`). 404 ' +
          'oidc_disabled when OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are not all set; 502 when the provider cannot be reached. ' +
          '`invitation` (the token of an invitation link) travels in the same signed cookie: if the sign-in creates an account, ' +
          'the invitation is used for it (single use, in the same transaction), as `POST /auth/signup` uses it.',
        querystring: Type.Object(
          { invitation: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })) },
          { additionalProperties: false },
        ),
        response: { 302: Redirect('to the provider') },
      },
    },
    async (request, reply) => {
      if (oidc === null) throw Errors.oidcDisabled();
      const { url, pending } = await oidc.start();
      const { invitation } = request.query;
      const value = Buffer.from(
        JSON.stringify({
          ...pending,
          ...(invitation === undefined ? {} : { invitation }),
          exp: Date.now() + PENDING_SECONDS * 1000,
        }),
      ).toString('base64url');
      reply.setCookie(OIDC_COOKIE, value, { ...cookieOptions, maxAge: PENDING_SECONDS });
      return reply.redirect(url, 302);
    },
  );

  app.get(
    '/oidc/callback',
    {
      config: {
        policy: { auth: 'public', limit: 'password', noStore: true },
        failureDetail: 'Failed to generate tokens',
        docs: { errors: [400, 403, 404, 502], headers: { 302: ['Location', 'Set-Cookie'] } },
      },
      schema: {
        tags,
        operationId: 'oidcCallback',
        summary: 'Finish single sign-on',
        description:
          "Where the provider sends the browser back. Checks the `app.oidc` cookie's state, the answer's issuer, the code " +
          '(with the PKCE verifier, at the provider), the ID token (issuer, audience, signature, expiry, nonce); any failure ' +
          'is 400 oidc_refused naming it, and the cookie is spent either way, so a replayed callback fails too. Then the account ' +
          "linked to the provider's issuer + subject signs in, or a new one is created: with SIGNUP=open, or with the invitation " +
          'carried from `GET /oidc/login` in any mode (403 invitation_required when it is unknown, used, revoked or expired); ' +
          'without one, 403 invitation_required under SIGNUP=invite and signup_closed under SIGNUP=closed. ' +
          'A matching username or e-mail address never links. Sets the refresh cookie exactly as a login does and redirects to `/`. ' +
          'A browser (`Accept` naming text/html) is sent to `/login?sso_error={code}` instead of a problem document, so a ' +
          'refusal is a page that says what happened.',
        querystring: Type.Object({}, { additionalProperties: true }),
        response: { 302: Redirect('to the web client, signed in') },
      },
    },
    async (request, reply) => {
      try {
        if (oidc === null) throw Errors.oidcDisabled();
        const pending = readPending(request);
        clearPending(reply);
        if (pending === undefined)
          throw Errors.oidcRefused(
            'no sign-in was started in this browser, or it took longer than 10 minutes; start again',
          );
        const who = await oidc.finish(new URL(request.url, config.publicUrl), pending);
        const { issued } = await signInWithOidc(services, config, who, clientInfo(request), pending.invitation);
        setAuthCookies(reply, config, issued.refreshToken, issued.refreshExpiresAt);
        return reply.redirect('/', 302);
      } catch (error) {
        // The person arrived here by a navigation from the provider: a JSON document would be all
        // they see. Only the code travels (the login page words it), so a link cannot put text there.
        if (error instanceof AppError && error.status !== 500 && acceptsHtml(request))
          return reply.redirect(`/login?sso_error=${encodeURIComponent(error.code)}`, 302);
        throw error;
      }
    },
  );
};

/** A browser navigation, as opposed to an API client: its Accept header names HTML. */
function acceptsHtml(request: FastifyRequest): boolean {
  return /\btext\/html\b/i.test(request.headers.accept ?? '');
}
