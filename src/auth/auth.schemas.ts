import { Type } from 'typebox';
import { Timestamp, Uuid } from '../http/schemas.js';

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

export const Credentials = Type.Object({
  username: Type.String({ examples: ['alice'] }),
  password: Type.String({ examples: ['correct horse battery staple'] }),
});

export const SignupResponse = Type.Object({ id: Uuid, username: Type.String() });

export const LoginQuery = Type.Object({
  includeUser: Type.Optional(
    Type.Union(['1', 't', 'T', 'TRUE', 'true', 'True', '0', 'f', 'F', 'FALSE', 'false', 'False'].map((v) => Type.Literal(v)), {
      description: 'also return the user (a boolean string, default false)',
    }),
  ),
});

export const parseBooleanString = (value: string | undefined): boolean =>
  value !== undefined && ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value);

export const LoginResponse = Type.Object({
  access_token: Type.String(),
  user: Type.Optional(UserSchema),
});

export const AccessTokenResponse = Type.Object({ access_token: Type.String() });

export const ChangePasswordBody = Type.Object({ old_password: Type.String(), new_password: Type.String() });
export const ChangePasswordResponse = Type.Object({ access_token: Type.String(), user: UserSchema });

export const DeleteOwnerBody = Type.Object({ password: Type.String() });

export const UserIdParams = Type.Object({ id: Uuid });

export const UserPage = Type.Union([Type.Array(UserSchema), Type.Null()], {
  description: 'users ordered by creation; an empty page is null',
});
