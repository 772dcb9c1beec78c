import { Type, type Static } from 'typebox';
import { explain } from '../shared/validation/schema-rules.js';
import { Content, LabelInput, Title } from '../notes/notes.schemas.js';
import { IMPORT_VERSION_MAX } from '../notes/version-rules.js';
import { EXPORT_FORMAT, IMPORT_FORMAT_VERSIONS } from './export-format.js';
import { IMPORT_MAX_NOTES } from './import-scan.js';
import { FOLDER_PATH_PATTERN, FOLDER_PATH_RULE } from '../folders/folder-name.js';

/**
 * POST /import's body: the one statement of what an import document may hold. The route documents
 * it, and the import worker (or, for a small body, the event loop) validates the parsed document
 * with Ajv compiled from this very object (import.validate.ts), because the route reads its own
 * body as a stream. What JSON Schema cannot say is checked after it and stated in IMPORT_RULES.
 */

/**
 * The times an import may carry. Every part of the system holds these: JS Date and PostgreSQL
 * timestamptz (years 1 to 9999 and beyond), SQLite's ISO-8601 text (which sorts by time only while
 * the year has four digits, so not past 9999), RFC 3339 in the API and export (four-digit years),
 * the Markdown export's front matter and zip entries (whose times are clamped to what zip holds).
 * Before 1970 nothing in Vellum's world was written, and negative Unix times are where other tools
 * that read an export (archivers, file systems, sync clients) break; the first import crash we
 * saw came from one.
 */
export const IMPORT_TIME_MIN = '1970-01-01T00:00:00.000Z';
export const IMPORT_TIME_MAX = '9999-12-31T23:59:59.999Z';

/**
 * RFC 3339 (`format: date-time` checks that the date exists) written as the export writes it:
 * T or t, at most 9 fraction digits, Z or an offset with a colon, no leap second (JavaScript
 * dates have none). Years 1970 to 9999; on the first and the last day only Z or a zero offset,
 * so that no offset moves the time out of IMPORT_TIME_MIN..IMPORT_TIME_MAX.
 */
export const IMPORT_TIME_PATTERN =
  '^(?!1970-01-01[Tt][^+]*\\+(?!00:00$))(?!9999-12-31[Tt][^-]*-(?!00:00$))' +
  '(?:19[7-9]\\d|[2-9]\\d{3})-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}:[0-5]\\d(?:\\.\\d{1,9})?(?:[Zz]|[+-]\\d{2}:\\d{2})$';

const ImportTime = explain(
  Type.String({
    format: 'date-time',
    pattern: IMPORT_TIME_PATTERN,
    description: `RFC 3339, from ${IMPORT_TIME_MIN} to ${IMPORT_TIME_MAX}`,
    examples: ['2026-01-31T12:00:00.000Z'],
  }),
  `must be an RFC 3339 timestamp from ${IMPORT_TIME_MIN} to ${IMPORT_TIME_MAX}, like 2026-01-31T12:00:00.000Z`,
);

const ImportVersion = Type.Object({
  version: Type.Integer({
    minimum: 1,
    maximum: IMPORT_VERSION_MAX,
    description: 'greater than the version before it in the note',
  }),
  title: Title,
  content: Content,
  created_at: ImportTime,
  label: Type.Optional(LabelInput),
  restored_from: Type.Optional(
    explain(
      Type.Union([
        Type.Integer({ minimum: 1, maximum: IMPORT_VERSION_MAX, description: 'a version number below this one' }),
        Type.Null(),
      ]),
      'must be null or an earlier version number',
    ),
  ),
});

/** What import checks after the schema, in the words of the operation's description. */
export const IMPORT_RULES =
  'Within a note, version numbers increase and times do not go backwards (the first version not before the ' +
  "note's created_at), restored_from names an earlier number, and each content is at most 1 MiB of UTF-8. The document holds " +
  'at most 1,000,000 versions in all, is nested at most 10 levels deep and holds at most 10,000 values in members the format ' +
  'does not define (those are ignored). Note ids, exported_at and username are not kept. Folders are matched by path ' +
  "ignoring case, reusing the importer's own and creating the rest; a path names at most 32 folders, and an import that " +
  'would take the account past 10,000 folders is 409 folder_limit.';

/** A folder as export writes it: its names from the top, joined by `/` (names cannot hold one). */
const FolderPath = explain(
  Type.String({
    maxLength: 10_000,
    pattern: FOLDER_PATH_PATTERN,
    description:
      'folder names from the top level, joined by /, like "Work/Plans"; each name follows the rule of POST /api/folders',
  }),
  FOLDER_PATH_RULE,
);
export const IMPORT_MAX_FOLDERS = 10_000;

/**
 * A note's `source_id` (what the Markdown import sets, from the front matter's `id`): present, even
 * null, it changes what "already here" means for existing=skip and ask. A note of one version made
 * from a file cannot match its original's history, so it is here when the importer has a live note
 * of that id, or else (null, or no such note) one with the same title and created_at.
 */
const SOURCE_ID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

export const ImportDocument = explain(
  Type.Object(
    {
      format: Type.Literal(EXPORT_FORMAT),
      format_version: explain(Type.Union(IMPORT_FORMAT_VERSIONS.map((v) => Type.Literal(v))), 'must be 1 or 2'),
      exported_at: Type.Optional(Type.String({ description: 'ignored' })),
      username: Type.Optional(Type.String({ description: 'ignored' })),
      folders: Type.Optional(
        Type.Array(FolderPath, {
          maxItems: IMPORT_MAX_FOLDERS,
          description: "version 2: every folder, also empty ones (notes' folders are created too)",
        }),
      ),
      attachments: Type.Optional(
        Type.Array(
          Type.Object({
            id: Type.String({ maxLength: 64 }),
            filename: Type.String({ maxLength: 1000 }),
            content_type: Type.String({ maxLength: 200 }),
          }),
          {
            maxItems: 100_000,
            description:
              "the files' names and types; an archive (application/zip) holds their bytes, a JSON document does not",
          },
        ),
      ),
      notes: Type.Array(
        Type.Object({
          id: Type.Optional(Type.Unknown({ description: 'ignored: every note is created anew' })),
          title: Title,
          created_at: ImportTime,
          updated_at: ImportTime,
          folder: Type.Optional(
            explain(
              Type.Unsafe<string | null>({
                type: ['string', 'null'],
                maxLength: 10_000,
                pattern: FOLDER_PATH_PATTERN,
                description: 'version 2: the note\'s folder path, like "Work/Plans"; null or absent: the top level',
              }),
              `must be null or ${FOLDER_PATH_RULE.replace(/^must be /, '')}`,
            ),
          ),
          pinned: Type.Optional(Type.Boolean({ description: 'version 2' })),
          archived: Type.Optional(Type.Boolean({ description: 'version 2' })),
          source_id: Type.Optional(
            explain(
              Type.Union([Type.String({ pattern: SOURCE_ID_PATTERN, description: 'a note id' }), Type.Null()]),
              'must be null or a note id',
            ),
          ),
          versions: Type.Array(ImportVersion, { minItems: 1, description: 'oldest first' }),
        }),
        { maxItems: IMPORT_MAX_NOTES },
      ),
    },
    { description: 'a vellum-export document (GET /api/export); members it does not define are ignored' },
  ),
  {
    type: 'the body must be a JSON object (a vellum-export document)',
  },
);
export type ImportDocument = Static<typeof ImportDocument>;
