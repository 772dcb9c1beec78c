import type yauzl from 'yauzl';
import * as attachmentsRepo from '../attachments/attachments.repository.js';
import { upload, type AttachmentServices } from '../attachments/attachments.service.js';
import { Errors } from '../errors.js';
import { EXPORT_FORMAT } from './export-format.js';
import {
  checkDirectory,
  collect,
  eachEntry,
  entryStream,
  inflated,
  openZip,
  type ArchiveParts,
} from './import-archive.js';
import type { ImportDocument } from './import.schema.js';
import { ATTACHMENTS_DIRECTORY } from './markdown-zip.js';
import { extractTags, TAG_CHARACTER, TAG_MAX_LENGTH } from '../tags/extract.js';

/**
 * Markdown back in: a zip of Markdown files (GET /export?format=markdown, or any folder of notes
 * zipped) or one Markdown file, made into a vellum-export document so that it imports by the same
 * rules, all or nothing. Each `.md` file is a note of one version: its front matter (as the export
 * writes it: `title`, `created_at`, `updated_at`) gives the title and times, else the file's name
 * and time; its directory is its folder. Files under `attachments/` are uploaded anew and the
 * notes' relative links to them (`../attachments/{id}-{name}`) become links to the new files.
 */

const NOTE_FILE = /\.(md|markdown)$/i;
const FILE_ENTRY = new RegExp(
  `^${ATTACHMENTS_DIRECTORY}/([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})-(.+)$`,
);
/** A relative link to an exported file, as markdown-zip.ts writes it (URI-encoded, `../` per level). */
const FILE_LINK = new RegExp(
  `(?:\\.\\./)*${ATTACHMENTS_DIRECTORY}/([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})-[^\\s()<>"']*`,
  'g',
);
const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n(?:\r?\n)?/;
const MAX_NOTE_FILE_BYTES = 2 * 1024 * 1024;
const utf8 = new TextDecoder('utf-8', { fatal: true });

const invalid = (detail: string) => Errors.validation(`Invalid Markdown import: ${detail}`);

type ImportNote = ImportDocument['notes'][number];

/** One Markdown file as a note: `name` is its file name, `time` its file time (ISO). */
export function markdownNote(bytes: Buffer, name: string, time: string, folder: string | null): ImportNote {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw invalid(`${name} is not UTF-8 text`);
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const fields = new Map<string, string>();
  // A key's YAML block list (`tags:` then `  - a` lines).
  const lists = new Map<string, string[]>();
  const front = FRONT_MATTER.exec(text);
  if (front !== null) {
    let key = '';
    for (const line of front[1]!.split(/\r?\n/)) {
      const item = /^\s*-\s+(.*)$/.exec(line);
      if (item !== null && key !== '') {
        lists.get(key)?.push(item[1]!.trim());
        continue;
      }
      const colon = line.indexOf(':');
      if (colon > 0) {
        key = line.slice(0, colon).trim().toLowerCase();
        fields.set(key, line.slice(colon + 1).trim());
        if (!lists.has(key)) lists.set(key, []);
      }
    }
    text = text.slice(front[0].length);
  }
  text = withTags(text, frontTags(fields.get('tags') ?? '', lists.get('tags') ?? []));
  const base = name.slice(name.lastIndexOf('/') + 1).replace(NOTE_FILE, '');
  const title = scalar(fields.get('title')) ?? base;
  const created = instant(scalar(fields.get('created_at') ?? fields.get('created') ?? fields.get('date'))) ?? time;
  const updated =
    instant(scalar(fields.get('updated_at') ?? fields.get('updated'))) ?? (created > time ? created : time);
  const id = scalar(fields.get('id'));
  return {
    title,
    created_at: created,
    updated_at: updated < created ? created : updated,
    folder,
    pinned: scalar(fields.get('pinned')) === 'true',
    archived: scalar(fields.get('archived')) === 'true',
    // Present, even null: "already here" is this id, else the title and created_at (import.schema.ts).
    source_id: id !== undefined && NOTE_ID.test(id) ? id : null,
    versions: [{ version: 1, title, content: text, created_at: updated < created ? created : updated }],
  };
}

const NOTE_ID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/**
 * Front matter `tags:` as Vellum tags: a YAML block list, a flow list (`[a, b]`) or a comma list
 * (`a, b`); each item's quotes and leading `#` dropped, spaces made `-`, characters a tag cannot hold
 * dropped, lower-cased (tags/extract.ts). Items that leave no tag, or only digits, are left out.
 */
function frontTags(inline: string, block: string[]): string[] {
  const flow = inline.startsWith('[') && inline.endsWith(']') ? inline.slice(1, -1) : inline;
  const items = [...block, ...(flow === '' ? [] : flow.split(','))];
  const tags: string[] = [];
  for (const item of items) {
    const tag = (scalar(item.trim()) ?? '')
      .trim()
      .replace(/^#+/, '')
      .replace(/\s+/gu, '-')
      .replace(TAG_UNSAFE, '')
      .toLowerCase();
    if (tag !== '' && !/^\p{N}+$/u.test(tag) && [...tag].length <= TAG_MAX_LENGTH && !tags.includes(tag))
      tags.push(tag);
  }
  return tags;
}
const TAG_UNSAFE = new RegExp(`(?!${TAG_CHARACTER}).`, 'gsu');

/** The text with the tags it does not hold yet as a last line `#a #b` (tags in Vellum live in the text). */
function withTags(text: string, tags: string[]): string {
  if (tags.length === 0) return text;
  const have = new Set(extractTags(text));
  const missing = tags.filter((tag) => !have.has(tag));
  if (missing.length === 0) return text;
  const line = missing.map((tag) => `#${tag}`).join(' ');
  const body = text.replace(/\s+$/u, '');
  return body === '' ? line : `${body}\n\n${line}`;
}

/** A time other tools may write any way Date reads (`2024-01-31`), as the export's ISO form; none before 1970. */
function instant(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) || time < 0 || time > Date.UTC(9999, 11, 31) ? undefined : new Date(time).toISOString();
}

/** A YAML scalar as the export writes them: a JSON string, or plain text (quotes of either kind dropped). */
function scalar(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (raw.startsWith('"')) {
    try {
      const value: unknown = JSON.parse(raw);
      return typeof value === 'string' ? value : undefined;
    } catch {
      return raw.slice(1, raw.endsWith('"') ? -1 : undefined);
    }
  }
  if (raw.startsWith("'") && raw.endsWith("'") && raw.length >= 2) return raw.slice(1, -1).replaceAll("''", "'");
  return raw;
}

/** The document of one Markdown file (POST /import with text/markdown). */
export function markdownFileDocument(bytes: Buffer, now: string): Buffer {
  const document = {
    format: EXPORT_FORMAT,
    format_version: 2,
    notes: [markdownNote(bytes, 'Imported note.md', now, null)],
  };
  return Buffer.from(JSON.stringify(document), 'utf8');
}

/** Whether a zip holds `name` (read from its directory, nothing inflated). */
export async function zipHolds(bytes: Buffer, name: string): Promise<boolean> {
  const zip = await openZip(bytes);
  try {
    return await new Promise<boolean>((resolve, reject) => {
      zip.on('entry', (entry: yauzl.Entry) => (entry.fileName === name ? resolve(true) : zip.readEntry()));
      zip.on('end', () => resolve(false));
      zip.on('error', () => reject(invalid('the zip file is damaged')));
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
}

/**
 * A zip of Markdown files as a document, its files uploaded; `abandon` removes them if the import
 * is refused. The notes' text together may inflate to at most `maxTextBytes` (IMPORT_MAX_BYTES, as
 * a JSON document): a small zip can hold gigabytes of well-compressed text, all of it kept here.
 */
export async function readMarkdownZip(
  s: AttachmentServices,
  ownerId: string,
  bytes: Buffer,
  maxTextBytes: number,
): Promise<ArchiveParts> {
  await checkDirectory(bytes, {
    kindOf: (name) => (FILE_ENTRY.test(name) ? 'file' : !name.endsWith('/') && NOTE_FILE.test(name) ? 'text' : 'skip'),
    maxTextEntry: Math.min(MAX_NOTE_FILE_BYTES, maxTextBytes),
    maxText: maxTextBytes,
    maxFileEntry: s.maxBytes,
    maxFiles: maxTextBytes,
  });
  const zip = await openZip(bytes);
  const folders = new Set<string>();
  const notes: Array<{ note: ImportNote }> = [];
  const renamed = new Map<string, string>();
  const uploaded: string[] = [];
  let textBytes = 0;
  const abandon = async () => {
    for (const id of uploaded) await attachmentsRepo.deleteAttachment(s.db, ownerId, id).catch(() => undefined);
  };
  try {
    await eachEntry(zip, async (entry) => {
      const name = entry.fileName;
      const file = FILE_ENTRY.exec(name);
      if (file !== null) {
        const created = await upload(s, ownerId, {
          filename: file[2]!,
          mimetype: undefined,
          stream: inflated(await entryStream(zip, entry), entry, name),
        });
        uploaded.push(created.id);
        renamed.set(file[1]!.toLowerCase(), created.id);
      } else if (name.endsWith('/')) {
        if (name !== `${ATTACHMENTS_DIRECTORY}/`) folders.add(name.slice(0, -1));
      } else if (NOTE_FILE.test(name)) {
        const slash = name.lastIndexOf('/');
        const folder = slash === -1 ? null : name.slice(0, slash);
        if (folder !== null) folders.add(folder);
        const content = await collect(
          inflated(await entryStream(zip, entry), entry, name),
          Math.min(MAX_NOTE_FILE_BYTES, maxTextBytes - textBytes),
          name,
        );
        textBytes += content.length;
        notes.push({ note: markdownNote(content, name, entry.getLastModDate().toISOString(), folder) });
      }
      // Anything else (a .DS_Store, a picture outside attachments/) is not a note: left out.
    });
    zip.close();
    if (notes.length === 0) throw invalid('the zip holds no Markdown (.md) file');
  } catch (error) {
    zip.close();
    await abandon();
    throw error;
  }
  for (const { note } of notes) {
    for (const version of note.versions) {
      version.content = version.content.replace(FILE_LINK, (link: string, id: string) => {
        const now = renamed.get(id.toLowerCase());
        return now === undefined ? link : `/api/attachments/${now}`;
      });
    }
  }
  const document = {
    format: EXPORT_FORMAT,
    format_version: 2,
    folders: [...folders].sort(),
    notes: notes.map((n) => n.note),
  };
  return { document: Buffer.from(JSON.stringify(document), 'utf8'), abandon, finish: async () => undefined };
}
