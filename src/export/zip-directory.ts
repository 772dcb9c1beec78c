import type yauzl from 'yauzl';
import { Errors } from '../errors.js';

/** What an importer does with an entry: reads it as text, stores it as a file, or leaves it unread. */
export type EntryKind = 'text' | 'file' | 'skip';

/** The bytes an import may inflate, as the importer's own limits say (each checked on the actual bytes again). */
export interface ZipBudget {
  kindOf(name: string): EntryKind;
  /** One text entry (a note, the document). */
  maxTextEntry: number;
  /** Every text entry together. */
  maxText: number;
  /** One file (ATTACHMENT_MAX_BYTES). */
  maxFileEntry: number;
  /** Every file together. */
  maxFiles: number;
  /** How many files. */
  maxFileCount: number;
}

const invalid = (detail: string) => Errors.validation(`Invalid archive: ${detail}`);
const quoted = (name: string) => JSON.stringify(name.length > 120 ? `${name.slice(0, 120)}…` : name);

interface Span {
  start: number;
  end: number;
  name: string;
}

/**
 * Checks a zip's whole central directory before any entry is inflated (ASVS 5.0 5.2.3):
 *  - no two entries share bytes, and none reaches into the directory. A zip bomb without
 *    recursion points many entries at one deflated block, so each inflates the same bytes again:
 *    with disjoint entries what the zip holds is bounded by its own size times deflate's ratio;
 *  - the declared sizes of what the importer reads, one by one and added up, are within its limits.
 * The sizes are only what the zip claims: yauzl's validateEntrySizes (on in openZip) stops an
 * entry that inflates to more than it declared, so the declared sizes are an upper bound.
 * `entries` are read from the directory alone (yauzl's readEntry and readLocalFileHeader, which
 * reads the 30 bytes of a local header).
 */
export async function checkZipDirectory(
  zip: yauzl.ZipFile,
  entries: (visit: (entry: yauzl.Entry) => Promise<void>) => Promise<void>,
  budget: ZipBudget,
): Promise<void> {
  // yauzl starts reading the directory at its offset and exposes it only there, before the first entry.
  const directoryStart = (zip as unknown as { readEntryCursor?: unknown }).readEntryCursor;
  const spans: Span[] = [];
  let text = 0;
  let files = 0;
  let fileCount = 0;
  await entries(async (entry) => {
    const name = entry.fileName;
    const header = await new Promise<{ fileDataStart: number }>((resolve, reject) => {
      zip.readLocalFileHeader(entry, { minimal: true }, (error, found) =>
        error === null ? resolve(found) : reject(invalid(`${quoted(name)} has no valid local header`)),
      );
    });
    spans.push({ start: entry.relativeOffsetOfLocalHeader, end: header.fileDataStart + entry.compressedSize, name });
    const size = entry.uncompressedSize;
    switch (budget.kindOf(name)) {
      case 'text':
        if (size > budget.maxTextEntry)
          throw invalid(
            `${quoted(name)} declares ${size} bytes; at most ${budget.maxTextEntry} are read from one file`,
          );
        text += size;
        if (text > budget.maxText)
          throw invalid(
            `its text (the document or its .md files) declares more than ${budget.maxText} bytes in all (IMPORT_MAX_BYTES)`,
          );
        break;
      case 'file':
        fileCount += 1;
        if (fileCount > budget.maxFileCount) break; // counted to the end: the existing answer names the total
        if (size > budget.maxFileEntry)
          throw invalid(
            `${quoted(name)} declares ${size} bytes; a file may hold at most ${budget.maxFileEntry} (ATTACHMENT_MAX_BYTES)`,
          );
        files += size;
        if (files > budget.maxFiles)
          throw invalid(
            `its files declare more than ${budget.maxFiles} bytes in all; at most IMPORT_MAX_BYTES are imported at once`,
          );
        break;
      default:
    }
  });
  if (fileCount > budget.maxFileCount)
    throw invalid(`it holds ${fileCount} files; at most ${budget.maxFileCount} are imported at once`);
  spans.sort((a, b) => a.start - b.start);
  for (let i = 1; i < spans.length; i += 1) {
    const [before, span] = [spans[i - 1]!, spans[i]!];
    if (span.start < before.end)
      throw invalid(
        `entries ${quoted(before.name)} and ${quoted(span.name)} overlap; a zip's entries must not share bytes`,
      );
  }
  const last = spans.at(-1);
  if (last !== undefined && typeof directoryStart === 'number' && last.end > directoryStart) {
    throw invalid(`entry ${quoted(last.name)} overlaps the zip's central directory`);
  }
}
