import { Readable } from 'node:stream';
import yazl from 'yazl';
import type { Db } from '../db/schema.js';
import * as repo from './export.repository.js';
import { ownerNotes } from './export.service.js';

/**
 * The Markdown export: a zip with one file per live note, its current version with a front-matter
 * block. yazl streams: entries are declared up front (names only) and each note's content is read
 * from the database when the archive reaches it, so memory holds one note at a time.
 */
export async function markdownZip(db: Db, ownerId: string): Promise<Readable> {
  const zip = new yazl.ZipFile();
  const names = new FileNames();
  for await (const note of ownerNotes(db, ownerId)) {
    const name = names.take(note.title);
    zip.addReadStreamLazy(name, { mtime: new Date(note.updated_at) }, (done) => {
      repo.currentContent(db, ownerId, note.id).then(
        // A note deleted meanwhile still gets its file (the list was taken first), empty.
        (row) => done(null, Readable.from([Buffer.from(markdownFile(note, row?.content ?? ''), 'utf8')])),
        (error: unknown) => done(error, undefined as never),
      );
    });
  }
  zip.end();
  return zip.outputStream as Readable;
}

/** Front matter in YAML: JSON strings are valid YAML double-quoted scalars, so any title is safe. */
export function markdownFile(note: { id: string; title: string; created_at: string; updated_at: string }, content: string): string {
  return `---\ntitle: ${JSON.stringify(note.title)}\nid: ${note.id}\ncreated_at: ${note.created_at}\nupdated_at: ${note.updated_at}\n---\n\n${content}`;
}

/** Characters no file system takes (Windows' list, control characters) or that mean something in paths. */
const UNSAFE = /[<>:"/\\|?*\u0000-\u001f\u007f]/gu;
/** Names Windows reserves for devices, whatever the extension. */
const RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])$/i;
const MAX_NAME = 100;

/**
 * File names from titles that every OS accepts and that stay distinct on case-insensitive file
 * systems: unsafe characters become "_", no leading/trailing dots or spaces, no device names, at
 * most 100 characters (never a split surrogate pair), and " (2)", " (3)"... on a repeat.
 */
export class FileNames {
  private readonly used = new Set<string>();

  take(title: string): string {
    let base = title.normalize('NFC').replace(UNSAFE, '_').replace(/\s+/gu, ' ').trim().replace(/^[. ]+|[. ]+$/g, '');
    if (base.length > MAX_NAME) base = cutAt(base, MAX_NAME).replace(/[. ]+$/g, '');
    if (base === '') base = 'Untitled';
    // Windows takes "con.txt" for the device too: the part before the first dot decides.
    if (RESERVED.test(base.split('.')[0]!.trim())) base = `_${base}`;
    for (let n = 1; ; n += 1) {
      const name = n === 1 ? `${base}.md` : `${base} (${n}).md`;
      const key = name.toLowerCase();
      if (!this.used.has(key)) {
        this.used.add(key);
        return name;
      }
    }
  }
}

/** The longest prefix of at most `max` UTF-16 units that does not split a surrogate pair. */
function cutAt(text: string, max: number): string {
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}
