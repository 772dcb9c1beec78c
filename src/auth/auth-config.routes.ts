import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Config } from '../config.js';

/**
 * GET /auth/config, minimal: what the login page may offer. TODO(teams-a merge): teams-a builds the
 * full route (SIGNUP and the rest); theirs replaces this file and its registration in app.ts.
 */
export const authConfigRoutes: FastifyPluginAsyncTypebox<{ config: Config }> = async (app, { config }) => {
  app.get(
    '/config',
    {
      config: { policy: { auth: 'public' } },
      schema: {
        tags: ['auth'],
        operationId: 'getAuthConfig',
        summary: 'What the sign-in and sign-up pages may offer',
        description:
          '`signup`: SIGNUP (open, invite, closed); `password_login`: PASSWORD_LOGIN (off: only administrators sign in with a ' +
          "password); `oidc`: the single sign-on button's label, or null when it is not set up; `passkeys`: always true.",
        response: { 200: AuthConfigSchema },
      },
    },
    async () => ({
      signup: ((config as Config & { signup?: string }).signup ?? 'open') as 'open' | 'invite' | 'closed',
      password_login: config.passwordLogin,
      oidc: config.oidc === null ? null : { name: config.oidc.name },
      passkeys: true as const,
    }),
  );
};

const AuthConfigSchema = Type.Object(
  {
    signup: Type.Union([Type.Literal('open'), Type.Literal('invite'), Type.Literal('closed')]),
    password_login: Type.Boolean(),
    oidc: Type.Union([Type.Object({ name: Type.String() }), Type.Null()]),
    passkeys: Type.Literal(true),
  },
  { $id: 'AuthConfig' },
);
