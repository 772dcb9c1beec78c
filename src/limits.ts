/**
 * How far a folder tree may grow (docs/api.md, "Folders, tags, pins, archive"): export, the Markdown zip and WebDAV build paths from
 * the tree, and an import of 4 paths 5,000 levels deep (40 KB) once made 20,000 folders whose
 * export held the event loop for seconds. Deeper or larger trees made before these limits stay
 * usable; they cannot grow. No imports: the import worker loads it. At src/'s root, as errors.ts
 * words the folder errors with them and imports no feature folder.
 */
export const FOLDER_MAX_DEPTH = 32;
export const FOLDERS_MAX = 10_000;

/** What a version's title and content may hold (notes/version-rules.ts re-exports them for its importers). */
export const TITLE_MAX_CHARACTERS = 200;
export const CONTENT_MAX_BYTES = 1024 * 1024;
