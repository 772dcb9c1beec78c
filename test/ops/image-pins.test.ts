import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

/**
 * scripts/image-pins.mjs (issue #43, finding 7): every pulled image is found, and
 * `--require-digests` refuses a floating tag and passes digests. The repository's own images are
 * not pinned yet (their digests could not be looked up here): the test states which they are, so a
 * new floating image shows up.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const SCRIPT = path.join(ROOT, 'scripts/image-pins.mjs');
const { imageReferences } = (await import(SCRIPT)) as {
  imageReferences(root: string): Array<{ file: string; image: string; pinned: boolean }>;
};

test("the repository's pulled images are all found (the build stage and vellum:local are not pulled)", () => {
  const refs = imageReferences(ROOT).map((r) => `${r.file} ${r.image}`);
  assert.deepEqual(refs.map((r) => r.replace(/@sha256:[0-9a-f]{64}$/, '')).sort(), [
    'Dockerfile node:22-bookworm-slim',
    'Dockerfile node:22-bookworm-slim',
    'compose.yaml caddy:2.10',
    'compose.yaml postgres:16.10',
    'compose.yaml redis:7.4',
  ]);
});

test('--require-digests fails on a floating tag and passes when every image has a digest', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-pins-'));
  try {
    fs.mkdirSync(path.join(dir, 'scripts'));
    fs.copyFileSync(SCRIPT, path.join(dir, 'scripts/image-pins.mjs'));
    const digest = `sha256:${'a'.repeat(64)}`;
    fs.writeFileSync(
      path.join(dir, 'Dockerfile'),
      `FROM node:22-bookworm-slim@${digest} AS build\nFROM build AS test\nFROM node:22-bookworm-slim@${digest}\n`,
    );
    const run = () =>
      spawnSync(process.execPath, [path.join(dir, 'scripts/image-pins.mjs'), '--require-digests'], {
        encoding: 'utf8',
      });
    fs.writeFileSync(
      path.join(dir, 'compose.yaml'),
      'services:\n  db:\n    image: postgres:16.10\n  app:\n    image: vellum:local\n',
    );
    const floating = run();
    assert.equal(floating.status, 1, floating.stderr);
    assert.match(floating.stdout, /^floating compose\.yaml:3 postgres:16\.10$/m);
    assert.match(floating.stderr, /1 image\(s\) not pinned by digest/);
    fs.writeFileSync(path.join(dir, 'compose.yaml'), `services:\n  db:\n    image: postgres:16.10@${digest}\n`);
    const pinned = run();
    assert.equal(pinned.status, 0, pinned.stderr);
    assert.equal(pinned.stdout.split('\n').filter((l) => l.startsWith('pinned ')).length, 3);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
