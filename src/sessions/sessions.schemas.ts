import { Type } from 'typebox';
import { AuthenticationCredential, WEBAUTHN_BODY_LIMIT } from '../shared/webauthn-schemas.js';
import { UserSchema } from '../accounts/accounts.schemas.js';
import { BooleanString, Query, Timestamp, Uuid } from '../http/schemas.js';

export const Credentials = Type.Object({
  username: Type.String({ examples: ['alice'] }),
  password: Type.String({ examples: ['correct horse battery staple'] }),
  code: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        'for an account with two-step sign-in: a 6-digit code from the authenticator app, or a recovery code. ' +
        'Without it such an account answers 401 with code "mfa_required".',
    }),
  ),
});

export const CsrfHeaders = Type.Object({
  'x-csrf-token': Type.Optional(
    Type.String({
      description: 'the token from GET /api/auth/cookie/csrf; required: without a valid one the answer is 403',
    }),
  ),
});

export const LoginQuery = Query({
  includeUser: Type.Optional(BooleanString('also return the user')),
});

export const LoginResponse = Type.Object({
  access_token: Type.String(),
  user: Type.Optional(UserSchema),
});

export const AccessTokenResponse = Type.Object({ access_token: Type.String() });

export const SessionSchema = Type.Object(
  {
    id: Uuid,
    created_at: Timestamp,
    last_used_at: Timestamp,
    user_agent: Type.Union([Type.String(), Type.Null()]),
    ip_address: Type.Union([Type.String(), Type.Null()]),
    current: Type.Boolean({ description: 'the session the calling access token was issued to ("this device")' }),
  },
  { $id: 'Session', description: 'one login: its refresh tokens, linked by rotation' },
);

export const SessionParams = Type.Object({ sessionID: Uuid });

/**
 * What a sensitive change carries to show it comes from the account holder (docs/api.md, "Re-authentication",
 * auth/reauthentication.service.ts); spread into the change's body.
 */
export const ReauthenticationFields = {
  password: Type.Optional(
    Type.String({
      examples: ['correct horse battery staple'],
      description:
        'the account password, asked again: missing or wrong is 401 with code "reauthentication_required", ' +
        "and a wrong one counts against this session's failure limit (429 once the session is locked; failed logins do not lock it)",
    }),
  ),
  code: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        'only for an account without a password: a current code from the authenticator app, or a recovery code, in its place',
    }),
  ),
  // Only for an account without a password, instead of `code`: a fresh assertion of one of its
  // passkeys, the browser's answer to `POST /auth/passkey/options` (each challenge works once).
  credential: Type.Optional(AuthenticationCredential),
};
/** Routes that take the fields above: a passkey assertion is larger than the other auth bodies. */
export const REAUTHENTICATION_BODY_LIMIT = WEBAUTHN_BODY_LIMIT;
export const ReauthenticationBody = Type.Object(ReauthenticationFields);
/** Said in the description of every route that asks for the password again. */
export const REAUTHENTICATION_NOTE =
  'Needs the password again (`password`; an account without one sends a current `code` or a passkey assertion `credential`): ' +
  '401 `reauthentication_required` when it is missing or wrong; ' +
  "wrong ones count against this session's failure limit (the login's thresholds, not its per-account lockout), and a locked session gets 429.";
