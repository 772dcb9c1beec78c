// Runs every test file under test/ with Node's test runner, on SQLite and, when TEST_DATABASE_URL
// is set, on PostgreSQL too. Extra arguments are passed to `node --test` (e.g. a file to run alone).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

function testFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

const args = process.argv.slice(2);
const files = args.some((a) => a.endsWith('.ts')) ? [] : testFiles('test').sort();

if (!process.env.TEST_DATABASE_URL) {
  const line = '!'.repeat(78);
  console.warn(`${line}\n!! TEST_DATABASE_URL is not set: PostgreSQL tests are SKIPPED; only SQLite runs.\n!! Example: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test\n${line}`);
}

const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...args, ...files],
  { stdio: 'inherit' },
);
if (!process.env.TEST_DATABASE_URL) console.warn('!! Reminder: PostgreSQL tests were SKIPPED (TEST_DATABASE_URL not set).');
process.exit(result.status ?? 1);
