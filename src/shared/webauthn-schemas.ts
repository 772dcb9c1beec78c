import { Type } from 'typebox';

/**
 * The body limit of the routes that take a passkey's answer (adding one, signing in, and re-authenticating with one). It holds every field below at its
 * maximum, JSON-escaped at the worst (about 42 KiB), with room for the answer's open-ended extras
 * (transports, public key, extension results); before, three 16 KiB fields met a 16 KiB body limit
 * and answers the document accepted were 413.
 */
export const WEBAUTHN_BODY_LIMIT = 64 * 1024;
/** WebAuthn caps a credential id at 1023 bytes: 1364 characters of base64url. */
const CREDENTIAL_ID_MAX = 1364;
/** WebAuthn's JSON, as @simplewebauthn/browser produces it; the library checks the rest. */
const Base64Url = (maxLength: number) => Type.String({ maxLength, pattern: '^[A-Za-z0-9_-]*$' });
const credential = (response: Record<string, ReturnType<typeof Type.String>>) =>
  Type.Object(
    {
      id: Type.String({ minLength: 1, maxLength: CREDENTIAL_ID_MAX, pattern: '^[A-Za-z0-9_-]+$' }),
      rawId: Base64Url(CREDENTIAL_ID_MAX),
      type: Type.Literal('public-key'),
      response: Type.Object({ clientDataJSON: Base64Url(8 * 1024), ...response }, { additionalProperties: true }),
      clientExtensionResults: Type.Object({}, { additionalProperties: true }),
      authenticatorAttachment: Type.Optional(Type.String({ maxLength: 64 })),
    },
    { additionalProperties: true },
  );

export const RegistrationCredential = credential({ attestationObject: Base64Url(16 * 1024) });
export const AuthenticationCredential = credential({
  authenticatorData: Base64Url(8 * 1024),
  signature: Base64Url(8 * 1024),
});
