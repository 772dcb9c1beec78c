/**
 * The rules for what a version carries, in one place for every route that sets them (saving,
 * restoring, PATCH /notes/{id}/{versionID}, import), so a value one route accepts is one every other
 * route and both databases can hold. Imports only src/limits.ts, which imports nothing: the import worker loads it.
 */

import { CONTENT_MAX_BYTES, TITLE_MAX_CHARACTERS } from '../limits.js';

export { CONTENT_MAX_BYTES, TITLE_MAX_CHARACTERS };

/**
 * The highest version number: `notes.version` and `note_versions.version` are PostgreSQL `integer`
 * columns. A note at this number takes no further version (409 `version_limit`), on SQLite too,
 * whose integers would otherwise grow past what diff, export and import agree on.
 */
export const VERSION_MAX = 2_147_483_647;

/**
 * The highest version number an import document may carry. Real histories are far below it (a save
 * a second for 30 years is under 10^9), and it leaves more than a billion saves of room under
 * VERSION_MAX for every imported note.
 */
export const IMPORT_VERSION_MAX = 1_000_000_000;

export const LABEL_MAX_CHARACTERS = 100;

/** What every refusal of a label says, after the field's name. */
export const LABEL_RULE = `must be null or 1 to ${LABEL_MAX_CHARACTERS} characters (trimmed) without control characters`;

/**
 * The label rule as a JSON Schema pattern (ECMA-262 with the `u` flag, as Ajv compiles it), the
 * only statement of it: `\s` is exactly what String.prototype.trim removes (the stored label is
 * the trimmed one), `\p{Cc}` the C0 controls (NUL included: PostgreSQL `text` cannot hold it),
 * DEL and the C1 controls (a label is a one-line name), `\p{Cs}` unpaired surrogates (not storable
 * as UTF-8); 1 to 100 characters (code points) once trimmed.
 */
export const LABEL_PATTERN = `^\\s*[^\\p{Cc}\\p{Cs}\\s](?:[^\\p{Cc}\\p{Cs}]{0,${LABEL_MAX_CHARACTERS - 2}}[^\\p{Cc}\\p{Cs}\\s])?\\s*$`;

/** Text that UTF-8 can carry unchanged: no unpaired surrogates (a JSON string may hold one, escaped). */
export const WELL_FORMED_PATTERN = '^\\P{Cs}*$';
export const WELL_FORMED_RULE = 'must be valid Unicode (no unpaired surrogates)';
