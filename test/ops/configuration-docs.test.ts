import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

// A setting exists when the code reads it: `env.NAME`, or a quoted NAME handed to a parser in config.ts.
function settingsReadBy(file: string): Set<string> {
  const source = read(file);
  const names = new Set<string>();
  for (const match of source.matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)) names.add(match[1]!);
  if (file === 'src/config.ts') for (const match of source.matchAll(/'([A-Z][A-Z0-9_]{2,})'/g)) names.add(match[1]!);
  return names;
}

const settings = new Set([...settingsReadBy('src/config.ts'), ...settingsReadBy('src/cluster.ts')]);
// Not deployment settings: the test suite's cheap hashing and pause points, and the CLI's password input.
const NOT_IN_ENV_EXAMPLE = new Set(['TEST_ARGON2', 'TEST_COLLAB_STORE_MS', 'TEST_PAUSE_AT', 'VELLUM_PASSWORD']);

test('every setting the code reads is in the configuration table of docs/configuration.md', () => {
  const table = read('docs/configuration.md');
  const missing = [...settings].filter((name) => !table.includes(`\`${name}\``));
  assert.ok(settings.size > 30, `found only ${settings.size} settings: the scan is broken`);
  assert.deepEqual(missing, []);
});

test('every deployment setting the code reads is listed in .env.example', () => {
  const example = read('.env.example');
  const missing = [...settings].filter(
    (name) => !NOT_IN_ENV_EXAMPLE.has(name) && !new RegExp(`^#? *${name}=`, 'm').test(example),
  );
  assert.deepEqual(missing, []);
});
