import { Type } from 'typebox';
import { Timestamp, Uuid } from '../http/schemas.js';

export const TITLE_MAX_CHARACTERS = 200;
export const CONTENT_MAX_BYTES = 1024 * 1024;

const Title = Type.String({ maxLength: TITLE_MAX_CHARACTERS, description: 'at most 200 characters' });
const Content = Type.String({ description: 'at most 1 MiB of UTF-8' });

export const CreateNoteBody = Type.Optional(
  Type.Object({ title: Type.Optional(Title), content: Type.Optional(Content) }, {
    description: 'absent fields get the title "Untitled" and empty content',
  }),
);

export const NewVersionBody = Type.Object({ title: Title, content: Content });

export const NoteParams = Type.Object({ noteID: Uuid });
export const VersionParams = Type.Object({ noteID: Uuid, versionID: Uuid });

export const NoteSchema = Type.Object({
  id: Uuid,
  owner_id: Uuid,
  title: Type.String(),
  content: Type.String(),
  version: Type.Integer({ minimum: 1 }),
  version_id: Uuid,
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Note' });

export const NoteRowSchema = Type.Object({
  id: Uuid,
  owner_id: Uuid,
  title: Type.String(),
  updated_at: Timestamp,
}, { $id: 'NoteRow' });

export const VersionRowSchema = Type.Object({
  id: Uuid,
  title: Type.String(),
  version: Type.Integer({ minimum: 1 }),
  created_at: Timestamp,
}, { $id: 'VersionRow' });

export const VersionSchema = Type.Object({
  id: Uuid,
  note_id: Uuid,
  title: Type.String(),
  content: Type.String(),
  version: Type.Integer({ minimum: 1 }),
  created_at: Timestamp,
}, { $id: 'Version' });

export const NotesQuery = Type.Object({
  limit: Type.Optional(Type.String({ description: 'page size, 1 to 100 (default: every note)' })),
  offset: Type.Optional(Type.String({ description: 'rows to skip, 0 or more (default 0)' })),
});

export const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(Type.String({ description: 'the ETag of GET /notes/{id}; a stale one gives 412' })),
});
