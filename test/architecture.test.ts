import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

/**
 * The layering rules of issue #20, read off the source: they hold for every file, including the
 * ones the next feature adds. Static on purpose: a rule about imports is checked on imports, and
 * one about writers on every writer — TypeScript, and the functions and triggers of migrations.
 */

const SRC = path.resolve('src');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

const files = sourceFiles(SRC).map((full) => ({
  name: path.relative(SRC, full).split(path.sep).join('/'),
  text: fs.readFileSync(full, 'utf8'),
}));
const feature = (name: string) => name.split('/')[0]!;

test('services, repositories, workers and shared code never import from src/http', () => {
  const inner = files.filter(
    (f) =>
      /\.(service|repository|worker)\.ts$/.test(f.name) || f.name.startsWith('shared/') || f.name.startsWith('db/'),
  );
  assert.ok(inner.length > 20, 'the rule looks at the service and storage files');
  const offenders = inner
    .filter((f) => /from '(\.\.\/)+http\//.test(f.text) || /from '\.\/http\//.test(f.text))
    .map((f) => f.name);
  assert.deepEqual(offenders, []);
});

const appFiles = files.filter((file) => !file.name.startsWith('db/migrations/'));

/** Which feature folders write each table from TypeScript, and which files do so outside storage. */
function typescriptWriters() {
  const write =
    /\b(?:insertInto|updateTable|deleteFrom)\('([a-z_]+)'|\b(?:insert into|delete from|update)\s+"?([a-z_]+)"?\s/gi;
  const writers = new Map<string, Set<string>>();
  const outsideStorage: string[] = [];
  for (const f of appFiles) {
    for (const match of f.text.matchAll(write)) {
      const table = (match[1] ?? match[2])!.toLowerCase();
      if (!writers.has(table)) writers.set(table, new Set());
      writers.get(table)!.add(feature(f.name));
      if (!/\.(repository|index)\.ts$/.test(f.name)) outsideStorage.push(`${f.name} writes ${table}`);
    }
  }
  return { writers, outsideStorage };
}

test('each table is written from one feature folder, and only from its storage files', () => {
  const { writers, outsideStorage } = typescriptWriters();
  assert.ok(writers.has('notes') && writers.has('users'), 'the scan finds the writes');
  const shared = [...writers]
    .filter(([, owners]) => owners.size > 1)
    .map(([table, owners]) => `${table}: ${[...owners].join(', ')}`);
  assert.deepEqual(shared, []);
  assert.deepEqual(outsideStorage, []);
});

/**
 * Dialect tests outside src/db, each with the reason it is still there. The list may only shrink:
 * a new file that tests the dialect fails, and so does a listed file that no longer needs to.
 */
const DIALECT_EXCEPTIONS: Record<string, string> = {
  'jobs/maintenance.ts': 'claiming a pass: advisory lock on PostgreSQL, one process on SQLite',
  'search/search.index.ts': 'FTS5 rows on SQLite, tsvector columns on PostgreSQL',
  'search/search.repository.ts': 'FTS5 MATCH against tsquery ranking',
  'search/search.service.ts': 'where snippets are built: the page texts are fetched by the worker on PostgreSQL',
  'search/search.routes.ts': 'what the search workers open: a read-only SQLite file or a PostgreSQL URL',
  'search/search.worker.ts': 'the worker opens its own connection of either kind',
  'cli/backup.ts':
    'backup and restore are SQLite file operations; PostgreSQL restores through pg_restore (cli/restore-postgres.ts)',
  'cluster.ts': 'an in-memory SQLite database cannot be shared by workers',
};

test('dialect tests live in src/db, except the listed files (which may only shrink)', () => {
  const dialect = /\bisPostgres\(|\.kind\s*[!=]==\s*'(?:postgres|sqlite)'/;
  const found = files
    .filter((f) => !f.name.startsWith('db/') && dialect.test(f.text))
    .map((f) => f.name)
    .sort();
  assert.deepEqual(found, Object.keys(DIALECT_EXCEPTIONS).sort());
});

/**
 * SQL that writes tables from inside the database: functions and triggers created by migrations.
 * Read from each migration's `up` in date order (a later `drop` removes what an earlier one
 * created; `down` is not read), so the list is what a fresh database has.
 */
interface SqlWriter {
  kind: 'function' | 'trigger';
  name: string;
  on?: string;
  executes?: string;
  writes: string[];
}

function sqlWriters(): Map<string, SqlWriter> {
  const live = new Map<string, SqlWriter>();
  const migrations = files
    .filter((f) => f.name.startsWith('db/migrations/'))
    .sort((a, b) => a.name.localeCompare(b.name));
  const statement =
    /\bcreate\s+(?:or\s+replace\s+)?(function|trigger)\s+(\w+)|\bdrop\s+(function|trigger)\s+(?:if\s+exists\s+)?(\w+)/gi;
  for (const f of migrations) {
    const up = f.text.slice(0, f.text.search(/export\s+async\s+function\s+down\b/) >>> 0);
    for (const match of up.matchAll(statement)) {
      if (match[3] !== undefined) {
        live.delete(`${match[3].toLowerCase()} ${match[4]!.toLowerCase()}`);
        continue;
      }
      const kind = match[1]!.toLowerCase() as SqlWriter['kind'];
      const name = match[2]!.toLowerCase();
      const rest = up.slice(match.index + match[0].length);
      let on: string | undefined;
      let executes: string | undefined;
      let body: string;
      if (kind === 'function') {
        // The body between the dollar quotes.
        const start = rest.indexOf('$$');
        body = rest.slice(start + 2, rest.indexOf('$$', start + 2));
      } else {
        // `… on <table> [for each row] [when …] begin … end`, to the end of the template literal.
        const text = rest.slice(0, rest.indexOf('`'));
        on = /\bon\s+"?(\w+)/i.exec(text)?.[1]?.toLowerCase();
        // PostgreSQL's triggers run a function instead of a body of their own.
        executes = /\bexecute\s+(?:function|procedure)\s+(\w+)/i.exec(text)?.[1]?.toLowerCase();
        body = text.slice(text.search(/\bbegin\b/i) >>> 0);
      }
      const writes = new Set<string>();
      // `for update` locks and `do update` resolves a conflict: neither names a table.
      for (const w of body.matchAll(
        /(?<!\b(?:for|do)\s+)\b(?:insert\s+(?:or\s+\w+\s+)?into|update|delete\s+from)\s+"?([a-z_]+)/gi,
      )) {
        writes.add(w[1]!.toLowerCase());
      }
      live.set(`${kind} ${name}`, {
        kind,
        name,
        ...(on !== undefined && { on }),
        ...(executes !== undefined && { executes }),
        writes: [...writes].sort(),
      });
    }
  }
  return live;
}

/** Tables only triggers write (no TypeScript names them), and the feature they belong to. */
const TRIGGER_ONLY_TABLES: Record<string, string> = {
  search_version_keys: 'search', // SQLite: an index entry's key, written by the trigger on the search_entries view
  search_current: 'search', // SQLite: which index entries are current
};

/**
 * SQL writes that cross a feature's tables, each with what keeps it right. The list may only
 * shrink: a new function or trigger writing another feature's table fails, and so does an entry
 * that no longer happens.
 *
 * The save on PostgreSQL is one function call (notes/save.postgres.ts), which writes the tags'
 * rows, the attachment references and the search entry that notes.service.ts writes through
 * tags/, attachments/ and search/ on SQLite; old instances call it during a rolling upgrade, so
 * it stays. test/notes/save-equivalence.test.ts replays random operation sequences on both
 * databases and compares every table a save writes with a model and with each other.
 */
const SAVE_FUNCTION =
  'the save in one PostgreSQL round trip; held to the TypeScript save by test/notes/save-equivalence.test.ts';
/**
 * The first forms of the save functions, replaced by their …_2 (which also say what the tags were
 * made for, migration 2026-11-27-81-o): this build calls them no more, the previous release does
 * during a rolling upgrade, and what they write is settled by the tags back-fill like any older
 * replica's write. Dropped in a later release.
 */
const PREVIOUS_SAVE_FUNCTION =
  "the previous release's save during a rolling upgrade; the tags back-fill settles its writes (test/jobs/catch-up.test.ts)";
const CROSS_FEATURE_SQL_WRITES: Record<string, string> = {
  'function vellum_create_note_2 (called from notes) writes attachment_refs (attachments)': SAVE_FUNCTION,
  'function vellum_create_note_2 (called from notes) writes note_tags (tags)': SAVE_FUNCTION,
  'function vellum_create_note_2 (called from notes) writes search_history (search)': SAVE_FUNCTION,
  'function vellum_save_version_2 (called from notes) writes attachment_refs (attachments)': SAVE_FUNCTION,
  'function vellum_save_version_2 (called from notes) writes note_tags (tags)': SAVE_FUNCTION,
  'function vellum_save_version_2 (called from notes) writes search_history (search)': SAVE_FUNCTION,
  'function vellum_create_note_1 (called from no caller) writes attachment_refs (attachments)': PREVIOUS_SAVE_FUNCTION,
  'function vellum_create_note_1 (called from no caller) writes note_tags (tags)': PREVIOUS_SAVE_FUNCTION,
  'function vellum_create_note_1 (called from no caller) writes note_versions (notes)': PREVIOUS_SAVE_FUNCTION,
  'function vellum_create_note_1 (called from no caller) writes notes (notes)': PREVIOUS_SAVE_FUNCTION,
  'function vellum_create_note_1 (called from no caller) writes search_history (search)': PREVIOUS_SAVE_FUNCTION,
  'function vellum_save_version_1 (called from no caller) writes attachment_refs (attachments)': PREVIOUS_SAVE_FUNCTION,
  'function vellum_save_version_1 (called from no caller) writes note_tags (tags)': PREVIOUS_SAVE_FUNCTION,
  'function vellum_save_version_1 (called from no caller) writes note_versions (notes)': PREVIOUS_SAVE_FUNCTION,
  'function vellum_save_version_1 (called from no caller) writes notes (notes)': PREVIOUS_SAVE_FUNCTION,
  'function vellum_save_version_1 (called from no caller) writes search_history (search)': PREVIOUS_SAVE_FUNCTION,
  // SQLite keeps current search in step with every writer of notes (saves, filing, trash, import)
  // without their knowing; save-equivalence.test.ts compares search_current with the model.
  'trigger search_current_moved (on notes) writes search_current (search)':
    "current search follows the note's version, trash and archive",
};

test("functions and triggers in migrations write only their own feature's tables, except the listed ones", () => {
  const { writers } = typescriptWriters();
  const ownerOf = (table: string): string | undefined => {
    const owners = writers.get(table);
    return owners?.size === 1 ? [...owners][0] : TRIGGER_ONLY_TABLES[table];
  };
  const live = [...sqlWriters().values()];
  assert.ok(
    live.some((w) => w.name === 'vellum_save_version_1' && w.writes.includes('note_tags')),
    'the scan reads function bodies',
  );
  assert.ok(
    live.some((w) => w.name === 'search_entries_insert' && w.on === 'search_entries'),
    'the scan reads triggers',
  );
  assert.ok(!live.some((w) => w.name === 'search_note_keys_delete'), 'a dropped trigger is gone');
  const crossing: string[] = [];
  const unowned: string[] = [];
  for (const w of live) {
    // A trigger writes for whoever writes its table; a function for the features that call it (or
    // whose tables' triggers run it). One that nothing here calls still writes for the instances of
    // an older release during a rolling upgrade: it is reported until listed.
    const callers =
      w.kind === 'trigger'
        ? [ownerOf(w.on!) ?? `?${w.on}`]
        : [
            ...new Set([
              ...appFiles.filter((f) => new RegExp(`\\b${w.name}\\s*\\(`).test(f.text)).map((f) => feature(f.name)),
              ...live.filter((t) => t.executes === w.name).map((t) => ownerOf(t.on!) ?? `?${t.on}`),
            ]),
          ];
    if (callers.length === 0) callers.push('no caller');
    for (const table of w.writes) {
      const owner = ownerOf(table);
      if (owner === undefined) unowned.push(`${w.kind} ${w.name} writes ${table}, which no feature owns`);
      for (const caller of callers) {
        const via = w.kind === 'trigger' ? `on ${w.on}` : `called from ${caller}`;
        if (owner !== undefined && owner !== caller)
          crossing.push(`${w.kind} ${w.name} (${via}) writes ${table} (${owner})`);
      }
    }
  }
  assert.deepEqual(unowned, []);
  assert.deepEqual(crossing.sort(), Object.keys(CROSS_FEATURE_SQL_WRITES).sort());
});

/**
 * Writes made two ways (`writeWith`: statements on SQLite, one function call on PostgreSQL), each
 * with the test that holds its two forms to one another. The list may only shrink.
 */
const TWO_FORM_WRITES: Record<string, string> = {
  'notes/notes.service.ts createNote': 'test/notes/save-equivalence.test.ts',
  'notes/notes.service.ts writeVersion': 'test/notes/save-equivalence.test.ts',
};

test('every write made two ways (writeWith) is listed with the test that compares its forms', () => {
  const found: string[] = [];
  for (const f of appFiles.filter((file) => file.name !== 'db/group-commit.ts')) {
    for (const call of f.text.matchAll(/\bwriteWith\s*\(/g)) {
      const before = f.text.slice(0, call.index);
      const enclosing = [...before.matchAll(/\bfunction\s+(\w+)/g)].at(-1)?.[1] ?? '?';
      found.push(`${f.name} ${enclosing}`);
    }
  }
  assert.deepEqual(found.sort(), Object.keys(TWO_FORM_WRITES).sort());
  for (const guard of new Set(Object.values(TWO_FORM_WRITES))) assert.ok(fs.existsSync(guard), `${guard} exists`);
});

/**
 * Issue #38: every error the service answers with is named in one catalogue (src/errors.ts), with
 * its status, code and words; everywhere else throws `Errors.<name>(…)`. An error made on the spot
 * (or a subclass of AppError) is reported with its file and line.
 */
test('errors are made only in the catalogue, src/errors.ts', () => {
  const made = /\bnew\s+AppError\b|\bextends\s+AppError\b/g;
  const found = appFiles.flatMap((f) =>
    [...f.text.matchAll(made)].map((m) => `${f.name}:${f.text.slice(0, m.index).split('\n').length}`),
  );
  assert.ok(
    found.some((at) => at.startsWith('errors.ts:')),
    'the scan finds the catalogue',
  );
  assert.deepEqual(
    found.filter((at) => !at.startsWith('errors.ts:')),
    [],
  );
});

/**
 * Routes read the request, call a service and write the answer (issue #38: WebDAV's routes were a
 * second application). The listed files still call a repository themselves; the list may only shrink.
 */
const ROUTES_CALLING_REPOSITORIES: Record<string, string> = {
  'tags/tags.routes.ts': 'GET /api/tags answers with countTags directly (no rule between the route and the query)',
};

test('route files import no repository, except the listed ones (which may only shrink)', () => {
  const routes = appFiles.filter((f) => /\.routes\.ts$/.test(f.name));
  assert.ok(
    routes.some((f) => f.name === 'dav/dav.routes.ts'),
    'the scan finds the route files',
  );
  const found = routes
    .filter((f) => /from '[^']*\.repository\.js'/.test(f.text))
    .map((f) => f.name)
    .sort();
  assert.deepEqual(found, Object.keys(ROUTES_CALLING_REPOSITORIES).sort());
});

/**
 * The folder-level graph of value imports under src/ (issue #38): a folder is one node, a file at
 * src/'s root is a node of its own (app.ts, errors.ts). `import type` and `export type` are left
 * out, as they leave nothing at run time; an `import { type A }` stays in, because with
 * verbatimModuleSyntax it still loads the module. Relative imports only: packages are no node.
 */
function importGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  const nodeOf = (name: string) => (name.includes('/') ? name.split('/')[0]! : name);
  const statement = /^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm;
  const dynamic = /(?<!typeof\s+)\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;
  for (const f of appFiles) {
    const from = nodeOf(f.name);
    if (!graph.has(from)) graph.set(from, new Set());
    const targets: string[] = [];
    for (const match of f.text.matchAll(statement)) if (match[2] === undefined) targets.push(match[3]!);
    for (const match of f.text.matchAll(dynamic)) targets.push(match[1]!);
    for (const target of targets) {
      const resolved = path.posix
        .normalize(path.posix.join(path.posix.dirname(f.name), target))
        .replace(/\.js$/, '.ts');
      if (resolved.startsWith('..')) continue; // outside src/
      const to = nodeOf(resolved);
      if (to !== from) graph.get(from)!.add(to);
    }
  }
  return graph;
}

/** Tarjan's strongly connected components of more than one node, each sorted, sorted. */
function importCycles(graph: Map<string, Set<string>>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string) => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return components
    .map((c) => c.join(', '))
    .sort()
    .map((c) => c.split(', '));
}

/**
 * Import cycles between folders that are still there, each being taken apart on its own branch.
 * The list may only shrink: a new cycle fails, and so does a listed one that no longer exists.
 */
const KNOWN_CYCLES: string[][] = [];

test('no import cycles between server folders, except the listed ones (which may only shrink)', () => {
  const graph = importGraph();
  assert.ok(graph.get('app.ts')?.has('accounts') && graph.get('notes')?.has('db'), 'the scan reads the imports');
  assert.deepEqual(importCycles(graph), KNOWN_CYCLES.map((c) => [...c].sort()).sort());
});

/** What src/http may import: the plumbing every feature stands on, never a feature. */
const HTTP_MAY_IMPORT = new Set(['http', 'shared', 'db', 'errors.ts', 'config.ts', 'logger.ts']);

test('src/http imports no feature folder', () => {
  const reached = [...(importGraph().get('http') ?? [])].filter((node) => !HTTP_MAY_IMPORT.has(node)).sort();
  assert.deepEqual(reached, []);
});

/** Every feature imports the catalogue of errors; the catalogue imports no feature folder (a root file such as limits.ts is none). */
test('errors.ts imports no feature folder', () => {
  const features = [...(importGraph().get('errors.ts') ?? [])].filter(
    (node) => !node.endsWith('.ts') && !HTTP_MAY_IMPORT.has(node),
  );
  assert.deepEqual(features.sort(), []);
});

/**
 * Who may read or write a note is decided in one place (issue #38): the members folder's repository,
 * which owns the table, and its predicates (members/access.repository.ts: readableBy, ownedOrShared,
 * isMember, noteRole). Every other query asks those instead of naming `note_members` itself. The schema's
 * row types (db/schema.ts) and the migrations that made the table are left out.
 */
const NOTE_MEMBERS_FILES = ['members/access.repository.ts', 'members/members.repository.ts'];

test('note_members is named only by the members repository and its access predicates', () => {
  const naming = appFiles
    .filter((f) => f.name !== 'db/schema.ts' && /\bnote_members\b/.test(f.text))
    .map((f) => f.name)
    .sort();
  assert.ok(naming.includes('members/members.repository.ts'), 'the scan finds the table');
  assert.deepEqual(naming, NOTE_MEMBERS_FILES);
});
