import fc from 'fast-check';
import { extractTags, encodeTags, searchableTags } from '../../src/tags/extract.js';

/**
 * The save's specification as a plain model (test/notes/save-equivalence.test.ts): random
 * sequences of note operations, what each should answer, and which rows they should leave in
 * every table a save writes. Both databases' save paths (TypeScript on SQLite, the PL/pgSQL
 * function on PostgreSQL) are held to it and to each other.
 *
 * Content is written with placeholders — {A0} and {A1} for the user's two uploaded attachments
 * ({A0U}: the same id upper-cased), {NONE} for an id no attachment has — so one sequence reads the
 * same on every database; the model knows which attachments a text links to from the placeholders
 * alone, not from the code under test.
 */

const FRAGMENTS = [
  'hello',
  'Straße und Maß',
  'naïve café',
  '日本語のメモ',
  '🎉 party',
  'nul\u0000byte',
  'İstanbul',
  '#a/b',
  '#A/B',
  '#Work',
  '#ünï/Ärger',
  '#123',
  '#a//b',
  '#x-y_z',
  '#日本',
  '#a/b/c',
  '`#inspan`',
  '``#double ` span``',
  '```\n#fenced\n```',
  '~~~\n#tilde\n~~~',
  '> ```\n> #quoted\n> ```',
  '![pic](/api/attachments/{A0})',
  '[file](/api/attachments/{A1})',
  'https://example.test/api/attachments/{A0U}',
  '[gone](/api/attachments/{NONE})',
];
const SEPARATORS = [' ', '\n', '\n\n'];
const TITLES = ['Plan', 'Ünïcödé 🎉', '', 'Title #nottag', 'Straße'];

export const content = fc
  .array(fc.tuple(fc.constantFrom(...FRAGMENTS), fc.constantFrom(...SEPARATORS)), { maxLength: 6 })
  .map((parts) => parts.map(([text, sep]) => `${text}${sep}`).join(''));
export const title = fc.constantFrom(...TITLES);

export type IfMatch = 'none' | 'current' | 'stale' | 'star' | 'list';
const ifMatch = fc.constantFrom<IfMatch>('none', 'current', 'stale', 'star', 'list');
const note = fc.nat(7);

export type Op =
  | { op: 'create'; title?: string; content?: string; folder: 'none' | 'F0' | 'missing' }
  | { op: 'save'; note: number; title: string; content: string; ifMatch: IfMatch }
  | { op: 'rename'; note: number; title: string }
  | { op: 'same'; note: number }
  | { op: 'restore'; note: number; version: number; beyond: boolean; ifMatch: IfMatch }
  | { op: 'file'; note: number; folder?: 'F0' | null | 'missing'; pinned?: boolean; archived?: boolean }
  | { op: 'trash' | 'untrash' | 'purge' | 'deleteNow'; note: number };

export const operation: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record(
      {
        op: fc.constant('create' as const),
        title,
        content,
        folder: fc.constantFrom('none' as const, 'F0' as const, 'missing' as const),
      },
      { requiredKeys: ['op', 'folder'] },
    ),
  },
  { weight: 5, arbitrary: fc.record({ op: fc.constant('save' as const), note, title, content, ifMatch }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('rename' as const), note, title }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('same' as const), note }) },
  // `version` picks one of the note's versions; `beyond` names the one after the newest, which does not exist.
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('restore' as const),
      note,
      version: fc.nat(5),
      beyond: fc.nat(5).map((n) => n === 0),
      ifMatch,
    }),
  },
  {
    weight: 2,
    arbitrary: fc
      .record(
        {
          op: fc.constant('file' as const),
          note,
          folder: fc.constantFrom('F0' as const, null, 'missing' as const),
          pinned: fc.boolean(),
          archived: fc.boolean(),
        },
        { requiredKeys: ['op', 'note'] },
      )
      .filter((f) => f.folder !== undefined || f.pinned !== undefined || f.archived !== undefined),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('trash' as const), note }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('untrash' as const), note }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constantFrom('purge' as const, 'deleteNow' as const), note }) },
);

/** 4 to 12 operations, starting with a note so that most have one to work on. */
export const sequence = fc
  .tuple(
    fc.record({ op: fc.constant('create' as const), title, content, folder: fc.constant('none' as const) }),
    fc.array(operation, { minLength: 3, maxLength: 11 }),
  )
  .map(([first, rest]): Op[] => [first, ...rest]);

interface ModelVersion {
  title: string;
  content: string;
  restored_from: number | null;
}
interface ModelNote {
  versions: ModelVersion[];
  trashed: boolean;
  gone: boolean;
  folder: string | null;
  pinned: boolean;
  archived: boolean;
}

/** What the rows of one user's notes should be, named by creation order (N0, N0v1, A0, F0). */
export interface Rows {
  notes: Array<{
    note: string;
    title: string;
    version: number;
    current: string;
    trashed: boolean;
    folder: string | null;
    pinned: boolean;
    archived: boolean;
    tags: string;
    /** The note's tags were made for its current version and its rows for its side of the trash. */
    tagsSettled: boolean;
    updatedIsCurrentVersion: boolean;
  }>;
  versions: Array<{
    id: string;
    title: string;
    content: string;
    restored_from: number | null;
    author: string | null;
    label: string | null;
  }>;
  note_tags: string[];
  attachment_refs: string[];
  search_entries: string[];
  search_current: string[];
}

export class SaveModel {
  readonly notes: ModelNote[] = [];

  /** The note an operation names (undefined: no note yet, so a well-formed id no note has). */
  target(index: number): number | undefined {
    return this.notes.length === 0 ? undefined : index % this.notes.length;
  }

  /** The note an operation works on: a restore from the trash or a purge picks among the trashed ones, if any. */
  targetOf(op: Exclude<Op, { op: 'create' }>): number | undefined {
    if (op.op === 'untrash' || op.op === 'purge') {
      const trashed = this.notes.flatMap((n, i) => (n.trashed && !n.gone ? [i] : []));
      if (trashed.length > 0) return trashed[op.note % trashed.length];
    }
    return this.target(op.note);
  }

  /** Applies `op` and returns the status it should answer. */
  apply(op: Op): number {
    if (op.op === 'create') {
      if (op.folder === 'missing') return 404;
      this.notes.push({
        versions: [{ title: op.title ?? 'Untitled', content: op.content ?? '', restored_from: null }],
        trashed: false,
        gone: false,
        folder: op.folder === 'F0' ? 'F0' : null,
        pinned: false,
        archived: false,
      });
      return 201;
    }
    const i = this.targetOf(op);
    const n = i === undefined ? undefined : this.notes[i]!;
    const live = n !== undefined && !n.gone && !n.trashed;
    const current = n?.versions.at(-1);
    switch (op.op) {
      case 'save':
      case 'rename':
      case 'same': {
        if (!live) return 404;
        const text =
          op.op === 'save'
            ? { title: op.title, content: op.content }
            : op.op === 'rename'
              ? { title: op.title, content: current!.content }
              : current!;
        if (op.op === 'save' && op.ifMatch === 'stale') return 412;
        n.versions.push({ title: text.title, content: text.content, restored_from: null });
        return 204;
      }
      case 'restore': {
        if (!live) return 404;
        const number = this.restoreNumber(op);
        const source = n.versions[number - 1];
        if (source === undefined) return 404;
        if (op.ifMatch === 'stale') return 412;
        n.versions.push({ title: source.title, content: source.content, restored_from: number });
        return 201;
      }
      case 'file':
        if (op.folder === 'missing') return 404;
        if (!live) return 404;
        if (op.folder !== undefined) n.folder = op.folder;
        if (op.pinned !== undefined) n.pinned = op.pinned;
        if (op.archived !== undefined) n.archived = op.archived;
        return 200;
      case 'trash':
        if (!live) return 404;
        n.trashed = true;
        return 204;
      case 'deleteNow':
        if (!live) return 404;
        n.gone = true;
        return 204;
      case 'untrash':
        if (n === undefined || n.gone || !n.trashed) return 404;
        n.trashed = false;
        return 200;
      case 'purge':
        if (n === undefined || n.gone || !n.trashed) return 404;
        n.gone = true;
        return 204;
    }
  }

  /** The version number a restore names: one of the note's, or (beyond) the next, not yet written. */
  restoreNumber(op: Extract<Op, { op: 'restore' }>): number {
    const i = this.target(op.note);
    const count = i === undefined ? 1 : this.notes[i]!.versions.length;
    return op.beyond ? count + 1 : (op.version % count) + 1;
  }

  /**
   * The notes current search finds for a word that only one fragment or title holds (so a
   * case-insensitive substring is a whole word): outside the trash, not archived.
   */
  found(word: string): string[] {
    return this.notes.flatMap((n, i) => {
      const current = n.versions.at(-1)!;
      const text = `${current.title} ${current.content}`.toLowerCase();
      return !n.gone && !n.trashed && !n.archived && text.includes(word) ? [`N${i}`] : [];
    });
  }

  /** The version the ETag of note `i` names. */
  version(i: number): number {
    return this.notes[i]!.versions.length;
  }

  rows(): Rows {
    const rows: Rows = {
      notes: [],
      versions: [],
      note_tags: [],
      attachment_refs: [],
      search_entries: [],
      search_current: [],
    };
    this.notes.forEach((n, i) => {
      if (n.gone) return;
      const name = `N${i}`;
      const current = n.versions.at(-1)!;
      const tags = extractTags(current.content);
      rows.notes.push({
        note: name,
        title: current.title,
        version: n.versions.length,
        current: `${name}v${n.versions.length}`,
        trashed: n.trashed,
        folder: n.folder,
        pinned: n.pinned,
        archived: n.archived,
        tags: encodeTags(tags),
        // Every write of this build says so: only an older release's leaves a note for the back-fill.
        tagsSettled: true,
        updatedIsCurrentVersion: true,
      });
      if (!n.trashed) rows.note_tags.push(...searchableTags(tags).map((tag) => `${name} ${tag} me`));
      if (!n.trashed && !n.archived) rows.search_current.push(`${name}v${n.versions.length}`);
      n.versions.forEach((v, k) => {
        const id = `${name}v${k + 1}`;
        rows.versions.push({
          id,
          title: v.title,
          content: v.content,
          restored_from: v.restored_from,
          author: 'me',
          label: null,
        });
        rows.search_entries.push(`${id} me`);
        for (const a of linkedPlaceholders(v.content)) rows.attachment_refs.push(`${id} ${a}`);
      });
    });
    return sortRows(rows);
  }
}

/** The If-Match header a kind stands for, against a note at `version`. */
export function ifMatchHeader(kind: IfMatch, version: number): Record<string, string> {
  switch (kind) {
    case 'none':
      return {};
    case 'star':
      return { 'if-match': '*' };
    case 'current':
      return { 'if-match': `"${version}"` };
    case 'stale':
      return { 'if-match': `"${version + 1}", W/"${version}"` };
    case 'list':
      return { 'if-match': `"999", "${version}"` };
  }
}

/** The attachments a text links to, read off its placeholders ({NONE} names none). */
function linkedPlaceholders(text: string): string[] {
  const found = new Set<string>();
  if (text.includes('{A0}') || text.includes('{A0U}')) found.add('A0');
  if (text.includes('{A1}')) found.add('A1');
  return [...found];
}

export function sortRows(rows: Rows): Rows {
  const by =
    <T>(key: (row: T) => string) =>
    (a: T, b: T) =>
      key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
  return {
    notes: [...rows.notes].sort(by((r) => r.note)),
    versions: [...rows.versions].sort(by((r) => r.id)),
    note_tags: [...rows.note_tags].sort(),
    attachment_refs: [...rows.attachment_refs].sort(),
    search_entries: [...rows.search_entries].sort(),
    search_current: [...rows.search_current].sort(),
  };
}
