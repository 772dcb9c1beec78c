import { Type } from 'typebox';
import { Limit, Offset, Query, Timestamp, Uuid } from '../http/schemas.js';

const fields = {
  id: Uuid,
  filename: Type.String(),
  content_type: Type.String({
    description: 'recognised from the bytes for PNG, JPEG, GIF, WebP, AVIF and PDF; otherwise as the upload said',
  }),
  size: Type.Integer({ minimum: 0 }),
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  created_at: Timestamp,
};

export const AttachmentSchema = Type.Object(fields, { $id: 'Attachment' });

export const AttachmentRow = Type.Object(
  {
    ...fields,
    references: Type.Integer({ minimum: 0, description: 'versions (current or old, trash included) that link to it' }),
  },
  { $id: 'AttachmentRow' },
);

export const AttachmentParams = Type.Object({ attachmentID: Uuid });

export const AttachmentList = Query({ limit: Type.Optional(Limit(50)), offset: Type.Optional(Offset()) });

export const Usage = Type.Object(
  {
    used_bytes: Type.Integer({ minimum: 0 }),
    quota_bytes: Type.Integer({ minimum: 0, description: '0: unlimited' }),
  },
  { $id: 'AttachmentUsage' },
);

export const UploadBody = Type.Object(
  {
    file: Type.String({ format: 'binary', description: "the file; its part's filename and Content-Type are kept" }),
  },
  {
    description:
      'multipart/form-data with one file part named "file"; another file part before it is refused (400), later parts are not read',
  },
);
