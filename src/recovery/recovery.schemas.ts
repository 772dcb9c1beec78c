import { Type } from 'typebox';
import { Timestamp } from '../http/schemas.js';

export const ResetRequestBody = Type.Object({
  login: Type.String({ minLength: 1, maxLength: 254, description: 'a username or a verified e-mail address' }),
});

export const ResetRequestResponse = Type.Object(
  {
    status: Type.Literal('accepted'),
    message: Type.String(),
  },
  { $id: 'PasswordResetRequested' },
);

export const ResetConfirmBody = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 200, description: 'the `token` of the reset link' }),
  new_password: Type.String(),
});

export const ResetLink = Type.Object(
  {
    url: Type.String({ description: '{PUBLIC_URL}/reset?token=…, single use' }),
    expires_at: Timestamp,
  },
  { $id: 'PasswordResetLink' },
);

export const EmailChangeBody = Type.Object({
  email: Type.Union([Type.String({ maxLength: 254 }), Type.Null()], {
    description: 'the new address, or null to remove the current one at once',
  }),
  password: Type.Optional(Type.String({ description: 'the current password (recent authentication)' })),
  code: Type.Optional(
    Type.String({ description: 'an account without a password: a current TOTP or recovery code instead' }),
  ),
});

export const EmailPending = Type.Object(
  {
    email: Type.String({ description: 'the address the confirmation link went to' }),
    expires_at: Timestamp,
    sent: Type.Boolean({ description: 'false when the SMTP server refused the mail: ask again later' }),
  },
  { $id: 'EmailPending' },
);

export const EmailConfirmBody = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 200, description: 'the `token` of the confirmation link' }),
});
