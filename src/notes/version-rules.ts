/**
 * The rules for what a version carries, in one place for every route that sets them (saving,
 * restoring, PATCH /notes/{id}/{versionID}, import), so a value one route accepts is one every other
 * route and both databases can hold. No imports: the import worker loads it.
 */

export const TITLE_MAX_CHARACTERS = 200;
export const CONTENT_MAX_BYTES = 1024 * 1024;

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
 * The same rule as a JSON Schema pattern (ECMA-262 with the `u` flag, as Ajv compiles it), for the
 * OpenAPI document: `\s` is exactly what String.prototype.trim removes, `\p{Cc}` the C0 controls
 * (NUL included), DEL and the C1 controls, `\p{Cs}` unpaired surrogates. Tested against parseLabel.
 */
export const LABEL_PATTERN =
  `^\\s*[^\\p{Cc}\\p{Cs}\\s](?:[^\\p{Cc}\\p{Cs}]{0,${LABEL_MAX_CHARACTERS - 2}}[^\\p{Cc}\\p{Cs}\\s])?\\s*$`;

/**
 * A label as stored (trimmed), or undefined when it breaks the rule. Control characters are refused,
 * NUL first among them: `note_versions.label` is `text` on PostgreSQL, which cannot hold NUL, and a
 * label is a one-line name (tabs and line breaks inside it are refused too, around it trimmed).
 * Unpaired surrogates cannot be stored as UTF-8.
 */
export function parseLabel(value: string): string | undefined {
  const trimmed = value.trim();
  // More than 2 × 100 UTF-16 units is more than 100 code points: no need to count a huge string.
  if (trimmed.length === 0 || trimmed.length > 2 * LABEL_MAX_CHARACTERS) return undefined;
  if (!trimmed.isWellFormed() || /\p{Cc}/u.test(trimmed)) return undefined;
  let characters = 0;
  for (const _ of trimmed) characters += 1;
  return characters <= LABEL_MAX_CHARACTERS ? trimmed : undefined;
}
