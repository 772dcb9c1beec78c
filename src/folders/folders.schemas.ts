import { Type } from 'typebox';
import { NullableUuid, Timestamp, Uuid } from '../http/schemas.js';
import { UUID_PATTERN } from '../shared/ids.js';
import { explain } from '../shared/validation/schema-rules.js';
import { FOLDER_NAME_PATTERN, FOLDER_NAME_RULE } from './folder-name.js';

export const FolderName = explain(
  Type.String({
    pattern: FOLDER_NAME_PATTERN,
    description:
      '1 to 100 characters once trimmed (stored trimmed), unique among its siblings ignoring case; no / \\ < > : " | ? * or ' +
      'control characters, no trailing dot, not a device name Windows reserves (CON, PRN, AUX, NUL, COM0-9, LPT0-9, with or without an extension)',
  }),
  { pattern: FOLDER_NAME_RULE },
);

export const ParentId = NullableUuid("the parent folder's id; null (or absent on create) is the top level");

export const FolderSchema = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    parent_id: NullableUuid('the parent folder; null: the top level'),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Folder' },
);

export const FolderListRowSchema = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    parent_id: NullableUuid('the parent folder; null: the top level'),
    created_at: Timestamp,
    updated_at: Timestamp,
    note_count: Type.Integer({
      minimum: 0,
      description: 'notes directly in this folder, outside the trash (archived ones included)',
    }),
  },
  { $id: 'FolderListRow' },
);

export const CreateFolderBody = Type.Object(
  { name: FolderName, parent_id: Type.Optional(ParentId) },
  { additionalProperties: false },
);

export const UpdateFolderBody = explain(
  Type.Object(
    { name: Type.Optional(FolderName), parent_id: Type.Optional(ParentId) },
    { additionalProperties: false, minProperties: 1, description: 'at least one of name and parent_id' },
  ),
  { minProperties: 'must give name or parent_id' },
);

export const FolderParams = Type.Object({ folderID: Uuid });

/** `folder` as GET /notes and search take it. */
export const FolderFilter = explain(
  Type.String({
    pattern: `(${UUID_PATTERN})|^root$`,
    description:
      "only notes directly in this folder (its id), or `root` for the top level; a folder that is not the caller's is 404",
  }),
  'must be a folder id or root',
);
