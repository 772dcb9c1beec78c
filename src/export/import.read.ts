import { isUtf8 } from 'node:buffer';
import { Errors } from '../errors.js';
import { checkImportShape } from './import-scan.js';
import { validateImport, type CheckedImport, type ImportNote, type ImportVersion } from './import.validate.js';
import { encodeTags, extractTags } from '../tags/extract.js';

/** What the note row needs before its versions are written. */
export interface ImportNoteHead {
  created_at: string;
  /** The last version's: the note's current title, number and time. */
  title: string;
  version: number;
  updated_at: string;
  /** How many versions follow it. */
  versions: number;
  folder: string | null;
  pinned: boolean;
  archived: boolean;
  /** The last version's tags (encodeTags). */
  tags: string;
  /** Markdown import: found "already here" by this id, else title and created_at (import.schema.ts). */
  sourceId?: string | null;
}

/** A checked document, in the order it is written: each note's head, then its versions. */
export type ImportItem = { head: ImportNoteHead } | { version: ImportVersion };

export interface ImportSummary {
  notes: number;
  versions: number;
  /** Some version has a label or restored_from. */
  labelled: boolean;
  /** Every folder path to recreate. */
  folders: string[];
  /** Names and types of the files an archive holds, by their ids in the document. */
  attachments: Array<{ id: string; filename: string; content_type: string }>;
}

/**
 * Bounds of one batch handed to the writer: it is copied to the event loop's thread at once and
 * written (and, on SQLite, indexed) without a pause, so it stays small.
 */
export const BATCH_MAX_VERSIONS = 200;
export const BATCH_MAX_TEXT = 256 * 1024;

/**
 * A request body to the checked notes of its vellum-export document: UTF-8, within the counts of
 * import-scan.ts (checked before anything is built), JSON, then every rule of validateImport. Throws
 * the 400 that names the first problem.
 */
export function readImport(bytes: Buffer): CheckedImport {
  if (!isUtf8(bytes)) throw Errors.validation('Invalid request body: it is not valid UTF-8');
  checkImportShape(bytes);
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a byte order mark, as Fastify's parser allows
  if (text.trim() === '') return validateImport(undefined);
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw Errors.invalidBody();
  }
  return validateImport(document);
}

export function summarise({ notes, folders, attachments = [] }: CheckedImport): ImportSummary {
  let versions = 0;
  let labelled = false;
  for (const note of notes) {
    versions += note.versions.length;
    labelled ||= note.versions.some((v) => v.label !== null || v.restored_from !== null);
  }
  return { notes: notes.length, versions, labelled, folders, attachments };
}

/** The notes as items, in batches of at most BATCH_MAX_VERSIONS versions and about BATCH_MAX_TEXT characters. */
export function* importBatches(notes: ImportNote[]): Generator<ImportItem[]> {
  let batch: ImportItem[] = [];
  let versions = 0;
  let text = 0;
  for (const note of notes) {
    const last = note.versions.at(-1)!;
    batch.push({
      head: {
        created_at: note.created_at,
        title: last.title,
        version: last.version,
        updated_at: last.created_at,
        versions: note.versions.length,
        folder: note.folder ?? null,
        pinned: note.pinned ?? false,
        archived: note.archived ?? false,
        tags: encodeTags(extractTags(last.content)),
        ...(note.source_id === undefined ? {} : { sourceId: note.source_id }),
      },
    });
    for (const version of note.versions) {
      batch.push({ version });
      versions += 1;
      text += version.title.length + version.content.length;
      if (versions >= BATCH_MAX_VERSIONS || text >= BATCH_MAX_TEXT) {
        yield batch;
        batch = [];
        versions = 0;
        text = 0;
      }
    }
  }
  if (batch.length > 0) yield batch;
}
