import { Type } from 'typebox';
import { Timestamp, Uuid } from '../http/schemas.js';
import { ReauthenticationFields } from '../sessions/sessions.schemas.js';
import { AuthenticationCredential, RegistrationCredential, WEBAUTHN_BODY_LIMIT } from '../shared/webauthn-schemas.js';

export { AuthenticationCredential, RegistrationCredential };
/** The body limit of the routes that take a passkey's answer (shared/webauthn-schemas.ts). */
export const PASSKEY_BODY_LIMIT = WEBAUTHN_BODY_LIMIT;

/** A TOTP code (6 digits) or a recovery code (24 letters and digits, dashes and spaces allowed). */
export const Code = Type.String({
  maxLength: 64,
  description: 'a 6-digit code from the authenticator app, or a recovery code',
});
export const CodeBody = Type.Object({ code: Code });
/** The password asked again (ReauthenticationFields) and a current code of the factor. */
export const PasswordAndCodeBody = Type.Object({ password: ReauthenticationFields.password, code: Code });

export const TotpSetup = Type.Object({
  secret: Type.String({ description: 'base32, for typing into an authenticator app' }),
  otpauth_url: Type.String({ description: 'the same as an otpauth:// URL, for a QR code' }),
});

export const RecoveryCodes = Type.Object({
  recovery_codes: Type.Array(Type.String(), { description: 'shown only here; each works once' }),
});

export const MfaStatusSchema = Type.Object(
  { totp: Type.Boolean(), passkeys: Type.Integer({ minimum: 0 }) },
  { $id: 'MfaStatus' },
);

export const PasskeyName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '\\S',
  description: '1 to 100 characters, not only spaces',
});
export const RegisterPasskeyBody = Type.Object({
  name: PasskeyName,
  credential: RegistrationCredential,
  password: Type.Optional(
    Type.String({
      // Bounded so that PASSKEY_BODY_LIMIT holds the whole body; no password is longer than 256.
      maxLength: 1024,
      description:
        'the account password, asked again, unless it came with the options of this challenge: ' +
        'without it on either step the answer is 401 "reauthentication_required"',
    }),
  ),
});
export const PasskeyLoginBody = Type.Object({ credential: AuthenticationCredential });

export const PasskeySchema = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    created_at: Timestamp,
    last_used_at: Type.Union([Timestamp, Type.Null()]),
    backed_up: Type.Boolean({ description: 'a synced passkey (in a password manager or a platform account)' }),
  },
  { $id: 'Passkey' },
);

export const PasskeyParams = Type.Object({ id: Uuid });

export const WebAuthnOptions = Type.Object(
  { challenge: Type.String() },
  {
    additionalProperties: true,
    description: "PublicKeyCredential options in WebAuthn's JSON form, for @simplewebauthn/browser",
  },
);
