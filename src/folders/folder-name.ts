/**
 * Folder names: the one statement of the rule, used by the routes' schemas and by import. WebDAV
 * shows folders as directories and the Markdown zip writes them as such, so a name must be a valid
 * directory name on every system people sync to: besides the contract's `/`, `\` and control
 * characters, Windows forbids `< > : " | ? *`, a trailing dot, and its device names (CON, PRN, AUX,
 * NUL, COM0–9, LPT0–9, also with an extension). No imports: the import worker loads it.
 */

export const FOLDER_NAME_MAX_CHARACTERS = 100;

export const FOLDER_NAME_RULE =
  `must be 1 to ${FOLDER_NAME_MAX_CHARACTERS} characters (trimmed) without / \\ < > : " | ? * ` +
  'or control characters, not end with a dot, and not be a device name Windows reserves (CON, PRN, AUX, NUL, COM1, LPT1, ...)';

// One character of a name, and one that may end it (not whitespace, which trimming removes, nor a dot).
const CHAR = '[^\\p{Cc}\\p{Cs}/\\\\<>:"|?*]';
const LAST = '[^\\p{Cc}\\p{Cs}/\\\\<>:"|?*\\s.]';
const FIRST = '[^\\p{Cc}\\p{Cs}/\\\\<>:"|?*\\s]';
const DEVICE = '(?:[cC][oO][nN]|[pP][rR][nN]|[aA][uU][xX]|[nN][uU][lL]|[cC][oO][mM][0-9¹²³]|[lL][pP][tT][0-9¹²³])';

/** One name, up to where `end` (a lookahead) says it ends. */
const name = (end: string) =>
  `\\s*(?!${DEVICE}(?:\\.|\\s*${end}))(?:${LAST}|${FIRST}${CHAR}{0,${FOLDER_NAME_MAX_CHARACTERS - 2}}${LAST})\\s*`;

/** ECMA-262 with the `u` flag, as Ajv compiles it; `\s` is what String.prototype.trim removes. */
export const FOLDER_NAME_PATTERN = `^${name('$')}$`;

/** A folder's path as export writes it and import reads it: names from the top, joined by `/`. */
export const FOLDER_PATH_PATTERN = `^${name('(?:/|$)')}(?:/${name('(?:/|$)')})*$`;
export const FOLDER_PATH_RULE = `must be folder names joined by /, each of which ${FOLDER_NAME_RULE}`;

const NAME = new RegExp(FOLDER_NAME_PATTERN, 'u');

/** Why `name` cannot name a folder, or undefined when it can (for import, whose paths are split here). */
export function folderNameProblem(name: string): string | undefined {
  return NAME.test(name) ? undefined : `folder name ${JSON.stringify(name.slice(0, 120))} ${FOLDER_NAME_RULE}`;
}

/** The stored name. */
export const cleanFolderName = (name: string): string => name.trim();

/** The name as siblings are compared: canonical composition, lower case. */
export const folderNameKey = (name: string): string => name.trim().normalize('NFC').toLowerCase();
