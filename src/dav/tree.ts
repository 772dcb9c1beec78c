import type { Db } from '../db/schema.js';
import { findChildByKey } from '../folders/folders.repository.js';
import { folderNameKey } from '../folders/folder-name.js';
import { FOLDER_MAX_DEPTH } from '../folders/folder-limits.js';
import { nameKey, type Segments } from './dav-path.js';
import * as repo from './dav.repository.js';

/**
 * How the caller's notes look as files: folders are collections, a note is `{title}.md` in its
 * folder, and other files are attachments placed under a name (dav_files). Names are unique in a
 * folder ignoring case: folders keep theirs, then placed files, then notes oldest first; a name
 * already taken gets " (2)", " (3)"… before its extension.
 */
export type Entry =
  | { kind: 'root'; id: string; name: ''; created_at: string; updated_at: string }
  | { kind: 'folder'; id: string; name: string; created_at: string; updated_at: string }
  | {
      kind: 'note';
      id: string;
      name: string;
      title: string;
      version: number;
      version_id: string;
      created_at: string;
      updated_at: string;
      size: number;
    }
  | {
      kind: 'file';
      id: string;
      name: string;
      attachment_id: string;
      sha256: string;
      size: number;
      content_type: string;
      created_at: string;
      updated_at: string;
    };

export type Collection = Extract<Entry, { kind: 'root' | 'folder' }>;

export const NOTE_EXTENSION = '.md';
export const isNoteName = (name: string): boolean =>
  name.endsWith(NOTE_EXTENSION) && name.length > NOTE_EXTENSION.length;
export const titleOfName = (name: string): string => name.slice(0, -NOTE_EXTENSION.length);
export const isCollection = (entry: Entry): entry is Collection => entry.kind === 'root' || entry.kind === 'folder';
/** The folder id children of this collection have (null at the top level). */
export const folderIdOf = (collection: Collection): string | null =>
  collection.kind === 'root' ? null : collection.id;

/** The file name of a note's title: characters no file name can hold become `_`. */
export function noteFileName(title: string): string {
  const base = title.replace(/[\p{Cc}/\\]/gu, '_');
  return `${base === '' ? 'Untitled' : base}${NOTE_EXTENSION}`;
}

function numbered(name: string, n: number): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? `${name.slice(0, dot)} (${n})${name.slice(dot)}` : `${name} (${n})`;
}

function claim(name: string, taken: Set<string>): string {
  let candidate = name;
  for (let n = 2; taken.has(nameKey(candidate)); n++) candidate = numbered(name, n);
  taken.add(nameKey(candidate));
  return candidate;
}

/** Everything directly in a folder (null: the top level), with the names WebDAV shows. */
export async function listChildren(db: Db, ownerId: string, folderId: string | null): Promise<Entry[]> {
  const [folders, files, notes] = await Promise.all([
    repo.childFolders(db, ownerId, folderId),
    repo.childFiles(db, ownerId, folderId),
    repo.childNotes(db, ownerId, folderId),
  ]);
  const taken = new Set<string>();
  const entries: Entry[] = [];
  for (const f of folders) {
    taken.add(nameKey(f.name));
    entries.push({ kind: 'folder', id: f.id, name: f.name, created_at: f.created_at, updated_at: f.updated_at });
  }
  for (const f of files) {
    entries.push({
      kind: 'file',
      id: f.id,
      name: claim(f.name, taken),
      attachment_id: f.attachment_id,
      sha256: f.sha256,
      size: Number(f.size),
      content_type: f.content_type,
      created_at: f.created_at,
      updated_at: f.updated_at,
    });
  }
  for (const n of notes) {
    entries.push({
      kind: 'note',
      id: n.id,
      name: claim(noteFileName(n.title), taken),
      title: n.title,
      version: n.version,
      version_id: n.version_id,
      created_at: n.created_at,
      updated_at: n.updated_at,
      size: Number(n.size),
    });
  }
  return entries;
}

export interface Located {
  segments: Segments;
  /** The collection the last name is looked up in; undefined when a name before it is no folder. */
  parent: Collection | undefined;
  /** What the path names, if anything. */
  entry: Entry | undefined;
}

export function rootEntry(ownerId: string): Collection {
  return {
    kind: 'root',
    id: ownerId,
    name: '',
    created_at: '1970-01-01T00:00:00.000Z',
    updated_at: '1970-01-01T00:00:00.000Z',
  };
}

/** What a path names: folders by their keys one by one, then the last name among its folder's children. */
export async function locate(db: Db, ownerId: string, segments: Segments): Promise<Located> {
  const root = rootEntry(ownerId);
  if (segments.length === 0) return { segments, parent: undefined, entry: root };
  // Past the deepest folder there can be (and a file in it) nothing exists, and each name would
  // cost a query: a 5,000-name path took 2 s. Trees made deeper before the limit end here too.
  if (segments.length > FOLDER_MAX_DEPTH + 1) return { segments, parent: undefined, entry: undefined };
  let parent: Collection = root;
  for (const name of segments.slice(0, -1)) {
    const folder = await findChildByKey(db, ownerId, folderIdOf(parent), folderNameKey(name));
    if (folder === undefined) return { segments, parent: undefined, entry: undefined };
    parent = {
      kind: 'folder',
      id: folder.id,
      name: folder.name,
      created_at: folder.created_at,
      updated_at: folder.updated_at,
    };
  }
  const last = nameKey(segments.at(-1)!);
  const children = await listChildren(db, ownerId, folderIdOf(parent));
  return { segments, parent, entry: children.find((c) => nameKey(c.name) === last) };
}

/**
 * Every entry below a collection (for DELETE, which removes their properties and files). A loop,
 * not a recursion, and no paths: a tree made deeper than the limit before it existed may be thousands of levels deep.
 */
export async function walk(db: Db, ownerId: string, collection: Collection): Promise<Entry[]> {
  const out: Entry[] = [];
  const pending: Collection[] = [collection];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    for (const entry of await listChildren(db, ownerId, folderIdOf(next))) {
      out.push(entry);
      if (entry.kind === 'folder') pending.push(entry);
    }
  }
  return out;
}
