import { Type } from 'typebox';
import { documentedAs, integerQuery, Timestamp, Uuid } from '../http/schemas.js';

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
  limit: Type.Optional(integerQuery('page size (default: every note)', { minimum: 1, maximum: 100 })),
  offset: Type.Optional(integerQuery('notes to skip', { minimum: 0, default: 0 })),
});

const IF_MATCH_DESCRIPTION = 'the ETag of the note\'s current version (from GET /api/notes/{noteID}, like "3"), or * for any; '
  + 'a stale one gives 412; weak tags never match';
/** RFC 9110 If-Match: `*` or a comma-separated list of entity tags. */
export const IF_MATCH_PATTERN = '^\\s*(\\*|(W/)?"[^"]*"(\\s*,\\s*(W/)?"[^"]*")*)\\s*$';

export const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(documentedAs(Type.String({ description: IF_MATCH_DESCRIPTION }), {
    type: 'string', pattern: IF_MATCH_PATTERN, description: IF_MATCH_DESCRIPTION, examples: ['"3"'],
  })),
});
