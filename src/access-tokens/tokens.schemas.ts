import { Type } from 'typebox';
import { Timestamp, Uuid } from '../http/schemas.js';
import { ReauthenticationFields } from '../sessions/sessions.schemas.js';
import { SCOPES } from './tokens.service.js';

const Scope = Type.Enum([...SCOPES]);

export const CreateTokenBody = Type.Object({
  name: Type.String({
    minLength: 1,
    maxLength: 100,
    pattern: '\\S',
    description: 'what the token is for, 1 to 100 characters',
  }),
  scopes: Type.Array(Scope, {
    minItems: 1,
    maxItems: 3,
    description: 'notes:read (reads), notes:write (everything else), dav (WebDAV)',
  }),
  expires_in_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650, description: 'none: it does not expire' })),
  ...ReauthenticationFields,
});

const fields = {
  id: Uuid,
  name: Type.String(),
  scopes: Type.Array(Scope),
  created_at: Timestamp,
  expires_at: Type.Union([Timestamp, Type.Null()]),
  last_used_at: Type.Union([Timestamp, Type.Null()], { description: 'written at most once a minute' }),
};

export const TokenSchema = Type.Object(fields, { $id: 'AccessToken' });
export const CreatedToken = Type.Object({
  ...fields,
  token: Type.String({ description: 'shown only here: vlm_ and 38 letters and digits' }),
});
export const TokenParams = Type.Object({ id: Uuid });
