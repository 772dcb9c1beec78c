import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { runCli } from '../helpers/cli.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-restore-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const restore = (file: string) =>
  runCli(['restore', file], { HOME: dir, DATABASE_URL: `sqlite:${path.join(dir, 'vellum.db')}` });

test('vellum restore refuses files that are not Vellum SQLite databases with one clear line each, no stack trace', async () => {
  const text = path.join(dir, 'notes.txt');
  fs.writeFileSync(text, 'hello, not a database\n');
  const random = path.join(dir, 'random.db');
  fs.writeFileSync(random, Buffer.alloc(8192, 7));
  const other = path.join(dir, 'other.db');
  const db = new BetterSqlite3(other);
  db.exec('create table x (a)');
  db.close();
  const cases: Array<[string, RegExp]> = [
    [text, /^vellum: the backup is not a readable SQLite database: file is not a database\n$/],
    [random, /^vellum: the backup is not a readable SQLite database: file is not a database\n$/],
    [other, /^vellum: the backup is not a Vellum database \(no kysely_migration table\)\n$/],
    [path.join(dir, 'missing.db'), /^vellum: no backup at .*missing\.db\n$/],
  ];
  for (const [file, expected] of cases) {
    const result = await restore(file);
    assert.equal(result.code, 1, `${file}: ${result.stderr}`);
    assert.match(result.stderr, expected, file);
    assert.doesNotMatch(result.stderr, /\n\s+at /, 'a stack trace');
  }
});
