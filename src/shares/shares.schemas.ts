import { Type } from 'typebox';
import { Timestamp, Uuid } from '../http/schemas.js';

export const ShareSchema = Type.Object(
  {
    id: Uuid,
    token: Type.String({ description: '192 random bits, base64url' }),
    url: Type.String({ description: '{PUBLIC_URL}/s/{token}' }),
    note_id: Uuid,
    version: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
      description: 'null: the link always shows the current version',
    }),
    expires_at: Type.Union([Timestamp, Type.Null()]),
    created_at: Timestamp,
    views: Type.Integer({ minimum: 0 }),
  },
  { $id: 'Share' },
);

export const CreateShareBody = Type.Object({
  version: Type.Optional(
    Type.Union([Type.Integer({ minimum: 1, maximum: 2147483647 }), Type.Null()], {
      description: 'a version to show for good; null or absent: the current one',
    }),
  ),
  expires_at: Type.Optional(
    Type.Union([Timestamp, Type.Null()], { description: 'when the link stops working; in the future' }),
  ),
});

export const NoteParams = Type.Object({ noteID: Uuid });
export const ShareParams = Type.Object({ noteID: Uuid, shareID: Uuid });
export const TokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });
export const SharedAttachmentParams = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 200 }),
  attachmentID: Uuid,
});

export const SharedNote = Type.Object(
  {
    title: Type.String(),
    content: Type.String(),
    version: Type.Integer({ minimum: 1 }),
    updated_at: Timestamp,
    tags: Type.Array(Type.String()),
    pinned: Type.Boolean({ description: 'the link shows one version for good' }),
    outdated: Type.Boolean({ description: 'the note has newer versions than the one shown' }),
  },
  { $id: 'SharedNote' },
);
