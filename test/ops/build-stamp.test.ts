import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

// `npm start` rebuilds only when what the build reads changed (scripts/build-stamp.mjs), on a
// small tree of its own so the checkout's build is never touched.
const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-stamp-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  fs.writeFileSync(path.join(dir, file), text);
};
const stamp = (mode: string) =>
  spawnSync(process.execPath, [path.join(dir, 'scripts/build-stamp.mjs'), mode], { encoding: 'utf8' });

test('a build is reused until a file the build reads changes', () => {
  write('scripts/build-stamp.mjs', fs.readFileSync(path.join(ROOT, 'scripts/build-stamp.mjs'), 'utf8'));
  write('package.json', '{}');
  write('src/main.ts', 'export {};');
  write('web/src/app.tsx', 'export {};');
  write('web/e2e/app.spec.ts', 'export {};');
  assert.equal(stamp('check').status, 1, 'nothing built yet');
  write('dist/main.js', '');
  write('dist/public/index.html', '');
  assert.equal(stamp('check').status, 1, 'built, but no stamp');
  assert.equal(stamp('write').status, 0);
  assert.equal(stamp('check').status, 0, 'up to date');

  write('web/e2e/app.spec.ts', 'export const changed = 1;');
  assert.equal(stamp('check').status, 0, 'browser specs are not part of the build');
  write('src/main.ts', 'export const changed = 1;');
  const changed = stamp('check');
  assert.equal(changed.status, 1, 'a source changed');
  assert.match(changed.stderr, /sources changed since the last build/);
  assert.equal(stamp('write').status, 0);
  write('src/new-file.ts', '');
  assert.equal(stamp('check').status, 1, 'a new source file');
  assert.equal(stamp('write').status, 0);
  fs.rmSync(path.join(dir, 'dist/main.js'));
  assert.equal(stamp('check').status, 1, 'the server build is gone');
});
