import { AppError } from '../errors.js';
import { CONTENT_MAX_BYTES, IMPORT_VERSION_MAX, LABEL_RULE, parseLabel, TITLE_MAX_CHARACTERS } from '../notes/version-rules.js';
import { EXPORT_FORMAT, EXPORT_FORMAT_VERSION } from './export-format.js';

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
}

/**
 * The times an import may carry. Every part of the system holds these: JS Date and PostgreSQL
 * timestamptz (years 1 to 9999 and beyond), SQLite's ISO-8601 text (which sorts by time only while
 * the year has four digits, so not past 9999), RFC 3339 in the API and export (four-digit years),
 * the Markdown export's front matter and zip entries (whose times are clamped to what zip holds).
 * Before 1970 nothing in Vellum's world was written, and negative Unix times are where other tools
 * that read an export (archivers, file systems, sync clients) break; the first crash of issue #19
 * came from one.
 */
export const IMPORT_TIME_MIN = '1970-01-01T00:00:00.000Z';
export const IMPORT_TIME_MAX = '9999-12-31T23:59:59.999Z';

const invalid = (detail: string) => new AppError(400, 'invalid_import', `Invalid import document: ${detail}`);

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const characters = (text: string) => {
  let n = 0;
  for (const _ of text) n += 1;
  return n;
};

/** Date.parse rolls 2025-02-30 over into March; a document's dates must exist as written. */
function realDate(value: string): boolean {
  const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const hour = Number(value.slice(11, 13));
  const minute = Number(value.slice(14, 16));
  const second = Number(value.slice(17, 19));
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day && hour < 24 && minute < 60 && second < 60;
}

function timestamp(value: unknown, where: string): string {
  if (typeof value !== 'string' || !RFC3339.test(value) || Number.isNaN(Date.parse(value)) || !realDate(value)) {
    throw invalid(`${where} must be an RFC 3339 timestamp like 2026-01-31T12:00:00.000Z`);
  }
  const iso = new Date(value).toISOString();
  // toISOString writes years past 9999 as +010000: four digits first, then compare as text.
  if (!/^\d{4}-/.test(iso) || iso < IMPORT_TIME_MIN || iso > IMPORT_TIME_MAX) {
    throw invalid(`${where} must be a time from ${IMPORT_TIME_MIN} to ${IMPORT_TIME_MAX}`);
  }
  return iso;
}

function text(value: unknown, where: string): string {
  if (typeof value !== 'string') throw invalid(`${where} must be a string`);
  if (!value.isWellFormed()) throw invalid(`${where} must be valid Unicode (no unpaired surrogates)`);
  return value;
}

/**
 * Checks a whole vellum-export document before anything is written and returns what to import.
 * The first problem found is reported with its path (notes[2].versions[0].created_at ...).
 * Note ids are not kept (every note is created anew), nor are exported_at and username.
 */
export function validateImport(document: unknown): ImportNote[] {
  if (!isObject(document)) throw invalid('the body must be a JSON object (a vellum-export document)');
  if (document.format !== EXPORT_FORMAT) throw invalid(`format must be "${EXPORT_FORMAT}"`);
  if (document.format_version !== EXPORT_FORMAT_VERSION) throw invalid(`format_version must be ${EXPORT_FORMAT_VERSION}`);
  if (!Array.isArray(document.notes)) throw invalid('notes must be an array');
  return document.notes.map((note: unknown, n: number) => {
    const at = `notes[${n}]`;
    if (!isObject(note)) throw invalid(`${at} must be an object`);
    const title = text(note.title, `${at}.title`);
    if (characters(title) > TITLE_MAX_CHARACTERS) throw invalid(`${at}.title must be at most ${TITLE_MAX_CHARACTERS} characters`);
    const createdAt = timestamp(note.created_at, `${at}.created_at`);
    timestamp(note.updated_at, `${at}.updated_at`);
    if (!Array.isArray(note.versions) || note.versions.length === 0) throw invalid(`${at}.versions must be a non-empty array`);
    let previous: ImportVersion | undefined;
    const versions = note.versions.map((version: unknown, k: number): ImportVersion => {
      const vat = `${at}.versions[${k}]`;
      if (!isObject(version)) throw invalid(`${vat} must be an object`);
      const number = version.version;
      if (typeof number !== 'number' || !Number.isSafeInteger(number) || number < 1 || number > IMPORT_VERSION_MAX) {
        throw invalid(`${vat}.version must be an integer from 1 to ${IMPORT_VERSION_MAX}`);
      }
      if (previous !== undefined && number <= previous.version) {
        throw invalid(`${vat}.version must be greater than ${previous.version}, the version before it`);
      }
      const vtitle = text(version.title, `${vat}.title`);
      if (characters(vtitle) > TITLE_MAX_CHARACTERS) throw invalid(`${vat}.title must be at most ${TITLE_MAX_CHARACTERS} characters`);
      const content = text(version.content, `${vat}.content`);
      if (Buffer.byteLength(content, 'utf8') > CONTENT_MAX_BYTES) throw invalid(`${vat}.content must be at most ${CONTENT_MAX_BYTES} bytes (1 MiB) of UTF-8`);
      const created = timestamp(version.created_at, `${vat}.created_at`);
      if (created < (previous?.created_at ?? createdAt)) {
        throw invalid(previous === undefined
          ? `${vat}.created_at must not be before the note's created_at`
          : `${vat}.created_at must not be before the version before it`);
      }
      let label: string | null = null;
      if (version.label !== undefined && version.label !== null) {
        if (typeof version.label !== 'string') throw invalid(`${vat}.label ${LABEL_RULE}`);
        // The rule PATCH applies, in the same words (version-rules.ts).
        label = parseLabel(version.label) ?? null;
        if (label === null) throw invalid(`${vat}.label ${LABEL_RULE}`);
      }
      let restoredFrom: number | null = null;
      if (version.restored_from !== undefined && version.restored_from !== null) {
        const from = version.restored_from;
        if (typeof from !== 'number' || !Number.isSafeInteger(from) || from < 1 || from >= number) {
          throw invalid(`${vat}.restored_from must be null or an earlier version number`);
        }
        restoredFrom = from;
      }
      previous = { version: number, title: vtitle, content, created_at: created, label, restored_from: restoredFrom };
      return previous;
    });
    return { created_at: createdAt, versions };
  });
}
