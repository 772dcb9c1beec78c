import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

/**
 * The layering rules of issue #20, read off the source: they hold for every file, including the
 * ones the next feature adds. Static on purpose: a rule about imports is checked on imports.
 */

const SRC = path.resolve('src');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

const files = sourceFiles(SRC).map((full) => ({ name: path.relative(SRC, full).split(path.sep).join('/'), text: fs.readFileSync(full, 'utf8') }));
const feature = (name: string) => name.split('/')[0]!;

test('services, repositories, workers and shared code never import from src/http', () => {
  const inner = files.filter((f) => /\.(service|repository|worker)\.ts$/.test(f.name) || f.name.startsWith('shared/') || f.name.startsWith('db/'));
  assert.ok(inner.length > 20, 'the rule looks at the service and storage files');
  const offenders = inner.filter((f) => /from '(\.\.\/)+http\//.test(f.text) || /from '\.\/http\//.test(f.text)).map((f) => f.name);
  assert.deepEqual(offenders, []);
});

test('each table is written from one feature folder, and only from its storage files', () => {
  const write = /\b(?:insertInto|updateTable|deleteFrom)\('([a-z_]+)'|\b(?:insert into|delete from|update)\s+"?([a-z_]+)"?\s/gi;
  const writers = new Map<string, Set<string>>();
  const outsideStorage: string[] = [];
  for (const f of files.filter((file) => !file.name.startsWith('db/migrations/'))) {
    for (const match of f.text.matchAll(write)) {
      const table = (match[1] ?? match[2])!.toLowerCase();
      if (!writers.has(table)) writers.set(table, new Set());
      writers.get(table)!.add(feature(f.name));
      if (!/\.(repository|index)\.ts$/.test(f.name)) outsideStorage.push(`${f.name} writes ${table}`);
    }
  }
  assert.ok(writers.has('notes') && writers.has('users'), 'the scan finds the writes');
  const shared = [...writers].filter(([, owners]) => owners.size > 1).map(([table, owners]) => `${table}: ${[...owners].join(', ')}`);
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
  'cli/backup.ts': 'backup and restore are SQLite file operations (pg_dump serves PostgreSQL)',
  'cluster.ts': 'an in-memory SQLite database cannot be shared by workers',
};

test('dialect tests live in src/db, except the listed files (which may only shrink)', () => {
  const dialect = /\bisPostgres\(|\.kind\s*[!=]==\s*'(?:postgres|sqlite)'/;
  const found = files.filter((f) => !f.name.startsWith('db/') && dialect.test(f.text)).map((f) => f.name).sort();
  assert.deepEqual(found, Object.keys(DIALECT_EXCEPTIONS).sort());
});
