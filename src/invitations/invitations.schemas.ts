import { Type } from 'typebox';
import { Timestamp, Uuid } from '../http/schemas.js';
import { explain } from '../shared/validation/schema-rules.js';

// No spaces, control characters (PostgreSQL text cannot hold NUL) or unpaired surrogates.
export const Email = explain(
  Type.String({
    minLength: 3,
    maxLength: 254,
    pattern: '^[^\\s@\\p{Cc}\\p{Cs}]+@[^\\s@\\p{Cc}\\p{Cs}]+$',
    description: 'an e-mail address (mailed the link when SMTP is set)',
    examples: ['sam@example.com'],
  }),
  { pattern: 'must be an e-mail address: one @, no spaces or control characters' },
);

export const CreateInvitationBody = Type.Object({
  email: Type.Optional(Email),
  admin: Type.Optional(Type.Boolean({ description: 'the account it creates is an administrator; default false' })),
  expires_in_days: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 365, description: 'days the link stays valid; default 7' }),
  ),
});

const invitationFields = {
  id: Uuid,
  email: Type.Union([Type.String(), Type.Null()]),
  admin: Type.Boolean(),
  expires_at: Timestamp,
  created_at: Timestamp,
};

export const InvitationSchema = Type.Object(invitationFields, { $id: 'Invitation' });

export const CreatedInvitation = Type.Object(
  {
    ...invitationFields,
    token: Type.String({ description: 'shown this once; only its hash is kept' }),
    url: Type.String({ description: '{PUBLIC_URL}/signup?invitation={token}' }),
  },
  { $id: 'CreatedInvitation' },
);

export const InvitationList = Type.Array(InvitationSchema, {
  description: 'unused, unexpired invitations, newest first (at most 500); without their tokens',
});

export const InvitationIdParams = Type.Object({ id: Uuid });
