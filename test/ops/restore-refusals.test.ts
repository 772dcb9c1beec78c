import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { entryArgs } from '../helpers/entry.js';
import { TEST_ENV } from '../helpers/harness.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-restore-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function restore(file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...entryArgs('cli'), 'restore', file], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        ...TEST_ENV,
        HOME: dir,
        LOG_LEVEL: 'silent',
        DATABASE_URL: `sqlite:${path.join(dir, 'vellum.db')}`,
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += String(chunk);
    });
    child.stderr.on('data', (chunk) => {
      stderr += String(chunk);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

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
