// `npm start` starts from an up-to-date build without rebuilding it: `npm run build` ends by
// writing a hash of everything the build reads (`write`); `prestart` runs `check`, which exits 0
// when that hash still matches, so only a changed tree (a pull, an edit) is built again.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const STAMP = path.join(ROOT, 'dist', '.build-hash');
/** What the server and client builds read; tests and browser specs are not part of them. */
const INPUTS = ['src', 'web', 'scripts', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];
const SKIPPED = new Set(['web/e2e', 'web/test', 'web/src/api/schema.d.ts', 'node_modules']);
const OUTPUTS = ['dist/main.js', 'dist/public/index.html'];

function files(relative) {
  if (SKIPPED.has(relative)) return [];
  const full = path.join(ROOT, relative);
  if (!fs.existsSync(full)) return [];
  if (!fs.statSync(full).isDirectory()) return [relative];
  return fs
    .readdirSync(full)
    .sort()
    .flatMap((name) => files(`${relative}/${name}`));
}

function treeHash() {
  const hash = createHash('sha256');
  for (const file of INPUTS.flatMap(files))
    hash
      .update(`${file}\0`)
      .update(fs.readFileSync(path.join(ROOT, file)))
      .update('\0');
  return hash.digest('hex');
}

const mode = process.argv[2];
if (mode === 'write') {
  fs.writeFileSync(STAMP, `${treeHash()}\n`);
} else if (mode === 'check') {
  const built = OUTPUTS.every((file) => fs.existsSync(path.join(ROOT, file)));
  const stamp = fs.existsSync(STAMP) ? fs.readFileSync(STAMP, 'utf8').trim() : '';
  if (!built || stamp !== treeHash()) {
    process.stderr.write('vellum: the sources changed since the last build (or nothing is built): building first\n');
    process.exit(1);
  }
} else {
  process.stderr.write('usage: node scripts/build-stamp.mjs write|check\n');
  process.exit(2);
}
