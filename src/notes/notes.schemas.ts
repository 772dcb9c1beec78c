import { Type } from 'typebox';
import { documentedAs, integerQuery, Timestamp, Uuid } from '../http/schemas.js';
import { LABEL_MAX_CHARACTERS, LABEL_PATTERN, TITLE_MAX_CHARACTERS } from './version-rules.js';

export { CONTENT_MAX_BYTES, TITLE_MAX_CHARACTERS } from './version-rules.js';

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

const Label = Type.Union([Type.String(), Type.Null()], { description: 'the version\'s name, or null' });
const RestoredFrom = Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
  description: 'the version number this version was restored from, or null',
});

export const VersionRowSchema = Type.Object({
  id: Uuid,
  title: Type.String(),
  version: Type.Integer({ minimum: 1 }),
  created_at: Timestamp,
  label: Label,
  restored_from: RestoredFrom,
}, { $id: 'VersionRow' });

export const VersionSchema = Type.Object({
  id: Uuid,
  note_id: Uuid,
  title: Type.String(),
  content: Type.String(),
  version: Type.Integer({ minimum: 1 }),
  created_at: Timestamp,
  label: Label,
  restored_from: RestoredFrom,
}, { $id: 'Version' });

const LABEL_DESCRIPTION = `the version's name: ${LABEL_MAX_CHARACTERS.toString()} characters at most once trimmed, at least 1, `
  + 'no control characters (C0 with NUL, DEL, C1) and no unpaired surrogates; null removes the name';

/**
 * Checked by hand (normalizeLabel) so PATCH and import refuse a label with the same words; the
 * document carries the rule as a pattern (version-rules.ts), which matches exactly what it accepts.
 */
export const LabelBody = Type.Object({
  label: Type.Union([
    documentedAs(Type.String({ description: LABEL_DESCRIPTION }), { type: 'string', pattern: LABEL_PATTERN, description: LABEL_DESCRIPTION }),
    Type.Null(),
  ]),
});

export const RestoreBody = Type.Object({
  version: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'the version number to restore' })),
  version_id: Type.Optional(Uuid),
}, { description: 'exactly one of version and version_id' });

export const DiffQuery = Type.Object({
  from: Type.Optional(Type.String({ description: 'version number (default: the newest existing version before `to`, or the empty document)' })),
  to: Type.Optional(Type.String({ description: 'version number (default: the current version)' })),
  context: Type.Optional(Type.String({ description: 'unchanged lines around each change, 0 to 20 (default 3)' })),
});

const DiffSide = Type.Object({ version: Type.Integer({ minimum: 1 }), version_id: Uuid, created_at: Timestamp });

export const DiffSchema = Type.Object({
  note_id: Uuid,
  from: Type.Union([DiffSide, Type.Null()], { description: 'null: the empty document' }),
  to: DiffSide,
  title: Type.Object({ from: Type.Union([Type.String(), Type.Null()]), to: Type.String(), changed: Type.Boolean() }),
  stats: Type.Object({ added: Type.Integer({ minimum: 0 }), removed: Type.Integer({ minimum: 0 }) }),
  complete: Type.Boolean({ description: 'false when the edit budget ran out and changed regions were replaced whole' }),
  hunks: Type.Array(Type.Object({
    from_start: Type.Integer({ minimum: 0 }),
    from_lines: Type.Integer({ minimum: 0 }),
    to_start: Type.Integer({ minimum: 0 }),
    to_lines: Type.Integer({ minimum: 0 }),
    lines: Type.Array(Type.Object({ op: Type.Union([Type.Literal('='), Type.Literal('-'), Type.Literal('+')]), text: Type.String() })),
  })),
  unified: Type.String({ description: 'the same diff as `diff -u` writes it, headers --- v{from} / +++ v{to}; empty when nothing changed' }),
}, { $id: 'Diff' });

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
