import { Type } from 'typebox';
import { explain } from '../shared/validation/schema-rules.js';
import { Timestamp, Uuid } from '../http/schemas.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_TOO_LONG, passwordTooShort } from '../passwords/password-policy.js';
import { SIGNUP_USERNAME_PATTERN, USERNAME_RULE_PHRASE } from './username.js';

export const UserSchema = Type.Object(
  {
    id: Uuid,
    username: Type.String(),
    is_admin: Type.Boolean(),
    email: Type.Union([Type.String(), Type.Null()], { description: 'A verified e-mail address, or null' }),
    created_at: Type.Union([Timestamp, Type.Null()]),
    updated_at: Type.Union([Timestamp, Type.Null()]),
  },
  { $id: 'User' },
);

/**
 * Signup's body: the username's rule and the password's length are the schema's (each with its own
 * message, schema-rules.ts); the breach check and entropy come after it (accounts.service.ts) and
 * are stated here in words. The minimum length is configurable.
 */
export function signupBody(passwordMinLength: number) {
  const username =
    'lower-cased first, then 3 to 32 characters of a-z, 0-9, "_", "." or "-", starting and ending with a letter or digit ' +
    '(so A-Z are accepted, and the Kelvin sign U+212A, which lower-cases to "k")';
  const password =
    `${passwordMinLength} to ${PASSWORD_MAX_LENGTH} characters (Unicode code points; never trimmed). Then it must not appear in a ` +
    'breached-password list (the Have I Been Pwned range API, or a bundled list of common passwords when that is unreachable) ' +
    'and must have enough entropy (PASSWORD_MIN_ENTROPY bits, default 60, computed as docs/api.md, "Entropy", describes). ' +
    'Each failed rule is a 400 with its own message.';
  const usernameRule = USERNAME_RULE_PHRASE;
  return Type.Object({
    username: explain(
      Type.String({
        minLength: 3,
        maxLength: 32,
        pattern: SIGNUP_USERNAME_PATTERN,
        description: username,
        examples: ['alice'],
      }),
      { minLength: usernameRule, maxLength: usernameRule, pattern: usernameRule },
    ),
    password: explain(
      Type.String({
        minLength: passwordMinLength,
        maxLength: PASSWORD_MAX_LENGTH,
        description: password,
        examples: ['violet harbor lantern quietly'],
      }),
      { minLength: passwordTooShort(passwordMinLength), maxLength: PASSWORD_TOO_LONG },
    ),
    invitation: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description:
          'the token of an invitation (the `invitation` parameter of its link): single use; needed when SIGNUP is invite or closed',
      }),
    ),
    welcome_note: Type.Optional(
      Type.Boolean({
        description:
          'true: the new account starts with a short "Welcome to Vellum" note (the web client asks for it; unless WELCOME_NOTE=off). ' +
          'Absent or false: the account starts empty',
      }),
    ),
  });
}

export const MeSchema = Type.Object(
  {
    ...UserSchema.properties,
    mfa: Type.Object({
      totp: Type.Boolean({ description: 'an authenticator app is set up: password logins need a code' }),
      passkeys: Type.Integer({ minimum: 0, description: 'how many passkeys can sign in' }),
    }),
    mfa_enrolment_required: Type.Boolean({
      description:
        'REQUIRE_SECOND_FACTOR covers this account and it has no second factor: every route but /auth/2fa/*, /auth/passkeys*, ' +
        '/auth/me, /auth/logout and /auth/config answers 403 mfa_enrolment_required until one is confirmed',
    }),
    has_password: Type.Boolean({
      description:
        'false for an account without a password (single sign-on, or made by an administrator before set-up): ' +
        'sensitive changes take `code` or `credential` instead of `password`',
    }),
  },
  { $id: 'Me' },
);

export const SignupResponse = Type.Object({ id: Uuid, username: Type.String() });

export const PasswordRulesSchema = Type.Object(
  {
    min_length: Type.Integer({
      minimum: 1,
      description: 'PASSWORD_MIN_LENGTH: fewest characters (Unicode code points)',
    }),
    max_length: Type.Integer({ minimum: 1, description: 'most characters' }),
    min_entropy_bits: Type.Number({
      minimum: 0,
      description: 'PASSWORD_MIN_ENTROPY: the estimate docs/api.md ("Entropy") describes must reach this',
    }),
    breach_check: Type.Union([Type.Literal('range-api'), Type.Literal('offline-list')], {
      description:
        'how a breached password is recognised: the Have I Been Pwned range API (with the bundled list when it cannot be reached), or the bundled list of common passwords alone',
    }),
  },
  { $id: 'PasswordRules' },
);

export const PasswordCheckBody = Type.Object({
  password: Type.String({ minLength: 1, maxLength: 1024, description: 'the password being typed' }),
});
export const PasswordCheckResponse = Type.Object(
  {
    breached: Type.Boolean({ description: 'known from a data breach: signup and a password change would refuse it' }),
  },
  { $id: 'PasswordCheck' },
);

export const ChangePasswordBody = Type.Object({ old_password: Type.String(), new_password: Type.String() });
export const ChangePasswordResponse = Type.Object({ access_token: Type.String(), user: UserSchema });

export const DeleteOwnerBody = Type.Object({ password: Type.String() });

export const UserIdParams = Type.Object({ id: Uuid });

export const AdminUserSchema = Type.Object(
  {
    ...UserSchema.properties,
    email: Type.Union([Type.String(), Type.Null()], { description: 'the verified address, or null' }),
    disabled: Type.Boolean({ description: 'cannot sign in; no session or token of it works' }),
    mfa: Type.Object({ totp: Type.Boolean(), passkeys: Type.Integer({ minimum: 0 }) }),
    last_login_at: Type.Union([Timestamp, Type.Null()]),
    storage_used_bytes: Type.Integer({ minimum: 0, description: 'attachment bytes stored' }),
    storage_quota_bytes: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: 'its own attachment quota (0: unlimited); null: STORAGE_QUOTA_BYTES',
    }),
  },
  { $id: 'AdminUser' },
);

export const UserPage = Type.Union([Type.Array(AdminUserSchema), Type.Null()], {
  description: 'users ordered by creation; an empty page is null',
});

export const AuthConfigSchema = Type.Object(
  {
    signup: Type.Union([Type.Literal('open'), Type.Literal('invite'), Type.Literal('closed')], {
      description: 'SIGNUP: open; invite (sign-up needs an invitation); closed (administrators create accounts)',
    }),
    password_login: Type.Boolean({ description: 'PASSWORD_LOGIN: whether the login form takes passwords' }),
    oidc: Type.Union([Type.Object({ name: Type.String({ description: 'the button label' }) }), Type.Null()], {
      description: 'single sign-on, when configured',
    }),
    passkeys: Type.Literal(true),
  },
  { $id: 'AuthConfig' },
);

export const AdminCreateUserBody = Type.Object({
  username: signupBody(1).properties.username,
  email: Type.Optional(
    Type.String({
      minLength: 3,
      maxLength: 254,
      pattern: '^[^\\s@]+@[^\\s@]+$',
      description: 'mailed the set-up link when SMTP is set',
    }),
  ),
  admin: Type.Optional(Type.Boolean({ description: 'an administrator; default false' })),
});

export const AdminCreatedUser = Type.Object({
  user: AdminUserSchema,
  setup_url: Type.String({ description: '{PUBLIC_URL}/setup?token=…: single use, valid 7 days' }),
  mailed: Type.Boolean({ description: 'the link is being mailed to `email` (given, and SMTP_URL set)' }),
});

export const SetupLink = Type.Object({ setup_url: Type.String(), expires_at: Timestamp });

export const AdministrationBody = Type.Object(
  {
    is_admin: Type.Optional(Type.Boolean()),
    disabled: Type.Optional(Type.Boolean()),
    storage_quota_bytes: Type.Optional(
      Type.Union([Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), Type.Null()], {
        description: 'attachment bytes this account may keep; 0 unlimited; null back to STORAGE_QUOTA_BYTES',
      }),
    ),
  },
  { additionalProperties: false },
);

export const SetupBody = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 256, description: 'the `token` parameter of the set-up link' }),
  password: Type.String({ description: "the new password: signup's rules, a 400 each" }),
});

export const SetupResponse = Type.Object({ access_token: Type.String(), user: UserSchema });
