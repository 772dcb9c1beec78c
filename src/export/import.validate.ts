import type { ValidateFunction } from 'ajv';
import { Errors } from '../errors.js';
import { firstFailure } from '../shared/validation/schema-rules.js';
import { createAjv } from '../shared/validation/validator.js';
import { CONTENT_MAX_BYTES } from '../notes/version-rules.js';
import { ImportDocument } from './import.schema.js';
import { FOLDER_MAX_DEPTH } from '../folders/folder-limits.js';

export { IMPORT_TIME_MAX, IMPORT_TIME_MIN } from './import.schema.js';

export interface ImportVersion {
  version: number;
  title: string;
  content: string;
  created_at: string;
  label: string | null;
  restored_from: number | null;
}

export interface ImportNote {
  created_at: string;
  versions: ImportVersion[];
  /** The folder's path (`Work/Plans`); null: the top level. */
  folder?: string | null;
  pinned?: boolean;
  archived?: boolean;
  /** Present (Markdown import): "already here" by this id, else by title and created_at (import.schema.ts). */
  source_id?: string | null;
}

/** A checked document: its notes, and every folder path it names (the document's own list first). */
export interface CheckedImport {
  notes: ImportNote[];
  folders: string[];
  /** The files the document describes (names and types), for an archive's import. */
  attachments?: Array<{ id: string; filename: string; content_type: string }>;
}

const invalid = Errors.invalidImport;

/** Folders nest at most FOLDER_MAX_DEPTH deep (folder-limits.ts): a deeper path is refused before anything is written. */
function checkDepth(path: string, at: string): void {
  let names = 1;
  for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) {
    if (++names > FOLDER_MAX_DEPTH) throw invalid(`${at} must be at most ${FOLDER_MAX_DEPTH} folders deep`);
  }
}

/** Compiled once per thread (the worker's, or the event loop's for small documents), on first use. */
let validate: ValidateFunction | undefined;

/**
 * Checks a whole vellum-export document before anything is written and returns what to import:
 * first the route's schema (ImportDocument, by Ajv), then the rules it cannot state (IMPORT_RULES).
 * The first problem found is reported with its path (notes[2].versions[0].created_at ...).
 * Note ids are not kept (every note is created anew), nor are exported_at and username.
 */
export function validateImport(document: unknown): CheckedImport {
  validate ??= createAjv().compile(ImportDocument);
  if (!validate(document)) {
    const failure = firstFailure(validate.errors!);
    throw invalid(
      failure.path === ''
        ? failure.explained
          ? failure.rule
          : `the document ${failure.rule}`
        : `${failure.path} ${failure.rule}`,
    );
  }
  const valid = document as ImportDocument;
  // Paths as the schema checked them (FOLDER_PATH_PATTERN); the document's own list first.
  const folders = new Set<string>(valid.folders ?? []);
  (valid.folders ?? []).forEach((path, i) => checkDepth(path, `folders[${i}]`));
  const notes = valid.notes.map((note, n) => {
    const folder = note.folder ?? null;
    if (folder !== null) {
      checkDepth(folder, `notes[${n}].folder`);
      folders.add(folder);
    }
    const createdAt = new Date(note.created_at).toISOString();
    let previous: ImportVersion | undefined;
    const versions = note.versions.map((version, k): ImportVersion => {
      const at = `notes[${n}].versions[${k}]`;
      if (previous !== undefined && version.version <= previous.version) {
        throw invalid(`${at}.version must be greater than ${previous.version}, the version before it`);
      }
      if (Buffer.byteLength(version.content, 'utf8') > CONTENT_MAX_BYTES) {
        throw invalid(`${at}.content must be at most ${CONTENT_MAX_BYTES} bytes (1 MiB) of UTF-8`);
      }
      // The schema's pattern keeps every time's year at four digits, so ISO strings compare as times.
      const created = new Date(version.created_at).toISOString();
      if (created < (previous?.created_at ?? createdAt)) {
        throw invalid(
          previous === undefined
            ? `${at}.created_at must not be before the note's created_at`
            : `${at}.created_at must not be before the version before it`,
        );
      }
      const restoredFrom = version.restored_from ?? null;
      if (restoredFrom !== null && restoredFrom >= version.version) {
        throw invalid(`${at}.restored_from must be null or an earlier version number`);
      }
      const label = version.label === undefined || version.label === null ? null : version.label.trim();
      previous = {
        version: version.version,
        title: version.title,
        content: version.content,
        created_at: created,
        label,
        restored_from: restoredFrom,
      };
      return previous;
    });
    const checked: ImportNote = {
      created_at: createdAt,
      versions,
      folder,
      pinned: note.pinned ?? false,
      archived: note.archived ?? false,
    };
    if (note.source_id !== undefined) checked.source_id = note.source_id === null ? null : note.source_id.toLowerCase();
    return checked;
  });
  const attachments = (valid.attachments ?? []).map(({ id, filename, content_type }) => ({
    id,
    filename,
    content_type,
  }));
  return { notes, folders: [...folders], attachments };
}
