import { Type } from 'typebox';
import { documentedAs, Timestamp, Uuid } from '../http/schemas.js';

export const UserSchema = Type.Object(
  {
    id: Uuid,
    username: Type.String(),
    is_admin: Type.Boolean(),
    created_at: Type.Union([Timestamp, Type.Null()]),
    updated_at: Type.Union([Timestamp, Type.Null()]),
  },
  { $id: 'User' },
);

/**
 * Signup's fields are checked by hand (username.ts, password-policy.ts) so that each rule has its
 * own message; the document states the rules. The minimum length is configurable.
 */
export function signupBody(passwordMinLength: number) {
  const username = 'lower-cased first, then 3 to 32 characters of a-z, 0-9, "_", "." or "-", starting and ending with a letter or digit';
  const password = `${passwordMinLength} to 256 characters (Unicode code points; never trimmed). It must also not appear in a `
    + 'breached-password list (the Have I Been Pwned range API, or a bundled list of common passwords when that is unreachable) '
    + 'and must have enough entropy (PASSWORD_MIN_ENTROPY bits, default 60, computed as CONTRACT.md describes). '
    + 'Each failed rule is a 400 with its own message.';
  return Type.Object({
    username: documentedAs(Type.String({ description: username }), {
      type: 'string', minLength: 3, maxLength: 32, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{1,30}[A-Za-z0-9]$', description: username, examples: ['alice'],
    }),
    password: documentedAs(Type.String({ description: password }), {
      type: 'string', minLength: passwordMinLength, maxLength: 256, description: password, examples: ['violet harbor lantern quietly'],
    }),
  });
}

export const SignupResponse = Type.Object({ id: Uuid, username: Type.String() });

export const ChangePasswordBody = Type.Object({ old_password: Type.String(), new_password: Type.String() });
export const ChangePasswordResponse = Type.Object({ access_token: Type.String(), user: UserSchema });

export const DeleteOwnerBody = Type.Object({ password: Type.String() });

export const UserIdParams = Type.Object({ id: Uuid });

export const UserPage = Type.Union([Type.Array(UserSchema), Type.Null()], {
  description: 'users ordered by creation; an empty page is null',
});
