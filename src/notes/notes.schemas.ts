import { Type } from 'typebox';
import { explain } from '../shared/validation/schema-rules.js';
import { FolderFilter } from '../folders/folders.schemas.js';
import { TagFilter } from '../tags/tags.schemas.js';
import { BooleanString, Limit, NullableUuid, Offset, ProblemSchema, Query, Timestamp, Uuid } from '../http/schemas.js';
import {
  LABEL_MAX_CHARACTERS,
  LABEL_PATTERN,
  LABEL_RULE,
  TITLE_MAX_CHARACTERS,
  WELL_FORMED_PATTERN,
  WELL_FORMED_RULE,
} from './version-rules.js';

export { CONTENT_MAX_BYTES, TITLE_MAX_CHARACTERS } from './version-rules.js';

export const Title = explain(
  Type.String({
    maxLength: TITLE_MAX_CHARACTERS,
    pattern: WELL_FORMED_PATTERN,
    description: 'at most 200 characters, no unpaired surrogates',
  }),
  { pattern: WELL_FORMED_RULE },
);
/** Its size (1 MiB of UTF-8) is checked after validation: JSON Schema counts characters, not bytes, and over it is 413, not 400. */
export const Content = explain(
  Type.String({
    pattern: WELL_FORMED_PATTERN,
    description: 'at most 1 MiB of UTF-8 (more is 413), no unpaired surrogates',
  }),
  { pattern: WELL_FORMED_RULE },
);

/**
 * A version number naming one to look up: any number a JavaScript number holds exactly (one past
 * VERSION_MAX is simply not found, 404), written in decimal digits in a query.
 */
export const VersionNumber = (description: string) =>
  explain(
    Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description }),
    'must be a version number (an integer 1 or more)',
  );

const FolderId = NullableUuid('the folder the note is filed in; null is the top level');

export const CreateNoteBody = Type.Optional(
  Type.Object(
    { title: Type.Optional(Title), content: Type.Optional(Content), folder_id: Type.Optional(FolderId) },
    {
      description: 'absent fields get the title "Untitled", empty content and the top level',
    },
  ),
);

export const FileNoteBody = explain(
  Type.Object(
    {
      folder_id: Type.Optional(FolderId),
      pinned: Type.Optional(Type.Boolean({ description: 'pinned notes lead the list' })),
      archived: Type.Optional(Type.Boolean({ description: 'archived notes leave the default list and search' })),
    },
    { additionalProperties: false, minProperties: 1, description: 'at least one of folder_id, pinned and archived' },
  ),
  { minProperties: 'must give folder_id, pinned or archived' },
);

export const NewVersionBody = Type.Object({ title: Title, content: Content });

export const NoteParams = Type.Object({ noteID: Uuid });
export const VersionParams = Type.Object({ noteID: Uuid, versionID: Uuid });

export const NoteSchema = Type.Object(
  {
    id: Uuid,
    owner_id: Uuid,
    title: Type.String(),
    content: Type.String(),
    version: Type.Integer({ minimum: 1 }),
    version_id: Uuid,
    created_at: Timestamp,
    updated_at: Timestamp,
    folder_id: NullableUuid('the folder; null: the top level'),
    pinned: Type.Boolean(),
    archived: Type.Boolean(),
    tags: Type.Array(Type.String(), { description: "the current version's tags, lower case, sorted" }),
  },
  { $id: 'Note' },
);

export const NoteRowSchema = Type.Object(
  {
    id: Uuid,
    owner_id: Uuid,
    title: Type.String(),
    updated_at: Timestamp,
    folder_id: NullableUuid('the folder; null: the top level'),
    pinned: Type.Boolean(),
    archived: Type.Boolean(),
    tags: Type.Array(Type.String(), { description: "the current version's tags, lower case, sorted" }),
    preview: Type.String({
      maxLength: 161,
      description:
        'the start of the current text as one line of plain text (Markdown and HTML marks left out, a first heading repeating the title dropped); at most 160 characters and an ellipsis',
    }),
  },
  { $id: 'NoteRow' },
);

const Label = Type.Union([Type.String(), Type.Null()], { description: "the version's name, or null" });
const RestoredFrom = Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
  description: 'the version number this version was restored from, or null',
});

const AuthorUsername = Type.Union([Type.String(), Type.Null()], {
  description:
    'who wrote the version: the owner or an editor the note is shared with; null once that account is deleted',
});

const Authors = Type.Array(Type.String(), {
  description:
    'everyone who wrote the version, in order: several for a version written from a live co-editing session ' +
    '(the first is author_username), else author_username alone (empty once that account is deleted)',
});

export const VersionRowSchema = Type.Object(
  {
    id: Uuid,
    title: Type.String(),
    version: Type.Integer({ minimum: 1 }),
    created_at: Timestamp,
    label: Label,
    restored_from: RestoredFrom,
    author_username: AuthorUsername,
    authors: Type.Optional(Authors),
  },
  { $id: 'VersionRow' },
);

export const VersionSchema = Type.Object(
  {
    id: Uuid,
    note_id: Uuid,
    title: Type.String(),
    content: Type.String(),
    version: Type.Integer({ minimum: 1 }),
    created_at: Timestamp,
    label: Label,
    restored_from: RestoredFrom,
    author_username: AuthorUsername,
    authors: Type.Optional(Authors),
  },
  { $id: 'Version' },
);

const LABEL_DESCRIPTION =
  `the version's name: ${LABEL_MAX_CHARACTERS.toString()} characters at most once trimmed, at least 1, ` +
  'no control characters (C0 with NUL, DEL, C1) and no unpaired surrogates; stored trimmed';

/** A label as PATCH and import take it; the pattern (version-rules.ts) is the whole rule, trimming a conversion after it. */
export const LabelInput = explain(
  Type.Union([Type.String({ pattern: LABEL_PATTERN, description: LABEL_DESCRIPTION }), Type.Null()]),
  LABEL_RULE,
);

export const LabelBody = Type.Object({ label: LabelInput });

/** Exactly one of the two: each form refuses the other's member. */
export const RestoreBody = explain(
  Type.Union(
    [
      Type.Object({ version: VersionNumber('the version number to restore') }, { additionalProperties: false }),
      Type.Object({ version_id: Uuid }, { additionalProperties: false }),
    ],
    { description: 'exactly one of version and version_id' },
  ),
  'give exactly one of "version" and "version_id"',
);

export const CONTEXT_MAX = 20;

export const DiffQuery = Query({
  from: Type.Optional(
    VersionNumber('version number (default: the newest existing version before `to`, or the empty document)'),
  ),
  to: Type.Optional(VersionNumber('version number (default: the current version)')),
  context: Type.Optional(
    Type.Integer({ minimum: 0, maximum: CONTEXT_MAX, default: 3, description: 'unchanged lines around each change' }),
  ),
});

const DiffSide = Type.Object({ version: Type.Integer({ minimum: 1 }), version_id: Uuid, created_at: Timestamp });

export const DiffSchema = Type.Object(
  {
    note_id: Uuid,
    from: Type.Union([DiffSide, Type.Null()], { description: 'null: the empty document' }),
    to: DiffSide,
    title: Type.Object({ from: Type.Union([Type.String(), Type.Null()]), to: Type.String(), changed: Type.Boolean() }),
    stats: Type.Object({ added: Type.Integer({ minimum: 0 }), removed: Type.Integer({ minimum: 0 }) }),
    complete: Type.Boolean({
      description: 'false when the edit budget ran out and changed regions were replaced whole',
    }),
    hunks: Type.Array(
      Type.Object({
        from_start: Type.Integer({ minimum: 0 }),
        from_lines: Type.Integer({ minimum: 0 }),
        to_start: Type.Integer({ minimum: 0 }),
        to_lines: Type.Integer({ minimum: 0 }),
        lines: Type.Array(
          Type.Object({
            op: Type.Union([Type.Literal('='), Type.Literal('-'), Type.Literal('+')]),
            text: Type.String(),
          }),
        ),
      }),
    ),
    unified: Type.String({
      description: 'the same diff as `diff -u` writes it, headers --- v{from} / +++ v{to}; empty when nothing changed',
    }),
  },
  { $id: 'Diff' },
);

/** `folder` and `tag` as GET /notes and search take them (defined by folders and tags). */
export { FolderFilter, TagFilter };

export const NotesQuery = Query({
  limit: Type.Optional(Limit(undefined, 'page size (default: every note)')),
  offset: Type.Optional(Offset('notes to skip')),
  folder: Type.Optional(FolderFilter),
  tag: Type.Optional(TagFilter),
  pinned: Type.Optional(
    explain(
      Type.Enum(['1', 't', 'T', 'TRUE', 'true', 'True', '0', 'f', 'F', 'FALSE', 'false', 'False'], {
        description: 'true: only pinned notes; false: only the others (a boolean string; default both)',
      }),
      'must be true or false',
    ),
  ),
  archived: Type.Optional(BooleanString('true: only archived notes; false: only the others')),
});

/** POST /notes/{id}/versions: `merge` is `true` or `false` and nothing else (docs/api.md, Notes). */
export const AddVersionQuery = Query({
  merge: Type.Optional(
    explain(
      Type.Enum(['true', 'false'], {
        description:
          'true: with a stale If-Match, merge the body with the changes made since that version (201, or 409 `merge_conflict`) ' +
          'instead of answering 412; default false',
      }),
      'must be true or false',
    ),
  ),
});

const LineRange = Type.Object({
  start: Type.Integer({
    minimum: 1,
    description: '1-based number of the first line; for an empty range, the number the next line has',
  }),
  end: Type.Integer({ minimum: 0, description: 'number of the last line, inclusive; start - 1 for an empty range' }),
  text: Type.String({ description: 'the lines, each with its line ending: exactly that part of the text' }),
});

export const MergeConflictSchema = Type.Object(
  {
    field: Type.Union([Type.Literal('title'), Type.Literal('content')], {
      description: 'title: the whole title is line 1 of each side',
    }),
    base: LineRange,
    ours: LineRange,
    theirs: LineRange,
  },
  {
    $id: 'MergeConflict',
    description:
      'one place both sides changed: the lines in the If-Match version (base), the body (ours) and the current version (theirs)',
  },
);

/** 409 of a save: `version_limit`, or `merge_conflict` with the conflicts and the current version. */
export const SaveConflictProblem = Type.Object(
  {
    ...ProblemSchema.properties,
    current_version: Type.Optional(
      Type.Integer({ minimum: 1, description: 'merge_conflict: the version the body was merged with' }),
    ),
    conflicts: Type.Optional(
      Type.Array(MergeConflictSchema, {
        description: 'merge_conflict: every place both sides changed, in order, the title first',
      }),
    ),
  },
  { additionalProperties: true, description: 'RFC 9457 problem details' },
);

/** 201 of a merged save: the note as saved, and `merged`. */
export const MergedNoteSchema = Type.Object(
  {
    ...NoteSchema.properties,
    merged: Type.Literal(true, { description: 'the body was merged with the changes made since the If-Match version' }),
  },
  { $id: 'MergedNote' },
);

const IF_MATCH_DESCRIPTION =
  'the ETag of the note\'s current version (from GET /api/notes/{noteID}, like "3"), or * for any; ' +
  'a stale one gives 412; weak tags never match';
/**
 * RFC 9110 If-Match: `*` or a comma-separated list of entity tags, in the grammar's own characters
 * (OWS is space and tab; etagc is visible ASCII but `"`, and obs-text), so the document admits no
 * value a header cannot carry (`\\s` and `[^"]` did: line breaks, control characters).
 */
const ETAG = '(W/)?"[\\x21\\x23-\\x7E\\x80-\\xFF]*"';
export const IF_MATCH_PATTERN = `^[ \\t]*(\\*|${ETAG}([ \\t]*,[ \\t]*${ETAG})*)[ \\t]*$`;
/** Far more tags than a client sends; a bound the document states instead of the header size limit's 431. */
export const IF_MATCH_MAX_LENGTH = 1024;

export const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(
    explain(
      Type.String({
        maxLength: IF_MATCH_MAX_LENGTH,
        pattern: IF_MATCH_PATTERN,
        description: IF_MATCH_DESCRIPTION,
        examples: ['"3"'],
      }),
      'must be an entity tag from GET /api/notes/{id}, like "3"',
    ),
  ),
});
