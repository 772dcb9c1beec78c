/**
 * Folder names in plain words (issue #42): the server's rule (src/folders/folder-name.ts: a name
 * must be a valid directory name on every system, since WebDAV and the Markdown zip show folders as
 * directories) said before asking, by the name field, and the server's own refusals (409 name
 * taken, 400 from the schema) said the same way rather than as the schema's text.
 */

export const FOLDER_NAME_MAX = 100;
const FORBIDDEN = /[/\\<>:"|?*]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const DEVICE = /^(?:con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(?:\..*)?$/i;

const key = (name: string) => name.trim().normalize('NFC').toLowerCase();

/** Why `name` cannot name a folder beside `siblings` (the other folders there), or null when it can. */
export function folderNameProblem(name: string, siblings: string[]): string | null {
  const trimmed = name.trim();
  if (trimmed === '') return 'Give the folder a name.';
  if ([...trimmed].length > FOLDER_NAME_MAX)
    return `A folder name can be at most ${FOLDER_NAME_MAX} characters; this one has ${[...trimmed].length}.`;
  const bad = FORBIDDEN.exec(trimmed)?.[0];
  if (bad !== undefined) return `A folder name cannot contain ${bad} (nor any of / \\ < > : " | ? *).`;
  if (CONTROL.test(trimmed)) return 'A folder name cannot contain control characters (a tab or a line break).';
  if (trimmed.endsWith('.')) return 'A folder name cannot end with a dot.';
  if (DEVICE.test(trimmed))
    return `“${trimmed}” is a name Windows keeps for a device, so the folder could not be synced there. Choose another.`;
  if (siblings.some((sibling) => key(sibling) === key(trimmed)))
    return `There is already a folder called “${trimmed}” here. Choose another name.`;
  return null;
}

/** What to say when the server refused a folder name: its problem+json answer in plain words. */
export function folderNameRefusal(name: string, status: number, body: unknown, fallback: string): string {
  const code = typeof body === 'object' && body !== null && 'code' in body ? String(body.code) : '';
  if (code === 'folder_name_taken')
    return `There is already a folder called “${name.trim()}” here (names differing only in capitals count as the same). Choose another name.`;
  // Schema refusals of the name: the rule in words, whichever part of it the server checked.
  if (status === 400)
    return (
      folderNameProblem(name, []) ??
      `This name cannot be used for a folder. A name has 1 to ${FOLDER_NAME_MAX} characters, without / \\ < > : " | ? *, and does not end with a dot.`
    );
  return fallback;
}
