import { Type } from 'typebox';
import { Timestamp, Uuid } from '../http/schemas.js';
import { explain } from '../shared/validation/schema-rules.js';
import { ReauthenticationFields } from '../sessions/sessions.schemas.js';
import { SCOPES } from './tokens.service.js';

const Scope = Type.Enum([...SCOPES]);

export const CreateTokenBody = Type.Object({
  // Control characters (PostgreSQL text cannot hold NUL) and unpaired surrogates have no place in a name.
  name: explain(
    Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: '^(?=.*\\S)[^\\p{Cc}\\p{Cs}]+$',
      description: 'what the token is for, 1 to 100 characters, not only spaces, no control characters',
    }),
    { pattern: 'must not be only spaces, nor hold control characters' },
  ),
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
