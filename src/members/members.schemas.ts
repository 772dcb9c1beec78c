import { Type } from 'typebox';
import { Timestamp, Uuid } from '../http/schemas.js';

export const Role = Type.Union([Type.Literal('viewer'), Type.Literal('editor')], {
  description: 'viewer: reads the note, its history and diffs; editor: also saves versions and restores',
});

export const MemberSchema = Type.Object(
  {
    user_id: Uuid,
    username: Type.String(),
    role: Role,
    created_at: Timestamp,
  },
  { $id: 'Member' },
);

export const AddMemberBody = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 64, description: 'the account to share with' }),
    role: Role,
  },
  { additionalProperties: false },
);

export const ChangeRoleBody = Type.Object({ role: Role }, { additionalProperties: false });

export const NoteParams = Type.Object({ noteID: Uuid });
export const MemberParams = Type.Object({ noteID: Uuid, userID: Uuid });
