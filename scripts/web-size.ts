// Sizes of the built web client (`npm run size:web`, after `npm run build`): what index.html
// loads before the first screen shows (the entry and its static imports) against what loads later
// (dynamic imports: the editor, the Markdown renderer, the screens other than the notes and the
// login page), raw and gzipped, from Vite's manifest. Exits 1 when the first screen's JavaScript
// and CSS together exceed the budget of issue 42 (60 kB gzipped, what a slow network carries before
// anything shows).
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

interface Chunk {
  file: string;
  name?: string;
  src?: string;
  isEntry?: boolean;
  isDynamicEntry?: boolean;
  imports?: string[];
  dynamicImports?: string[];
  css?: string[];
}

export const BUDGET_GZIP_BYTES = 60_000;
const root = path.resolve(import.meta.dirname, '../dist/public');
const manifestPath = path.join(root, '.vite/manifest.json');
if (!fs.existsSync(manifestPath)) {
  console.error(`No ${path.relative(process.cwd(), manifestPath)}: run \`npm run build\` first.`);
  process.exit(2);
}
const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as Record<string, Chunk>;

/** A chunk's file plus every chunk it imports statically (they load with it), CSS apart. */
function closure(key: string, seen = new Set<string>()): Set<string> {
  if (seen.has(key)) return seen;
  seen.add(key);
  for (const next of manifest[key]?.imports ?? []) closure(next, seen);
  return seen;
}

function sizes(files: Iterable<string>) {
  let raw = 0;
  let gzip = 0;
  for (const file of files) {
    const bytes = fs.readFileSync(path.join(root, file));
    raw += bytes.length;
    // Level 6 is what servers and CDNs use by default.
    gzip += gzipSync(bytes, { level: 6 }).length;
  }
  return { raw, gzip };
}

const kB = (n: number) => `${(n / 1000).toFixed(1)} kB`;
const row = (label: string, files: string[]) => {
  const s = sizes(files);
  console.log(
    `${label.padEnd(34)} ${kB(s.gzip).padStart(10)} gzip ${kB(s.raw).padStart(10)} raw   ${files.map((f) => path.basename(f)).join(', ')}`,
  );
  return s;
};

const entryKey = Object.keys(manifest).find((key) => manifest[key]!.isEntry);
if (entryKey === undefined) throw new Error('The manifest has no entry chunk');
const first = closure(entryKey);
const firstJs = [...first].map((key) => manifest[key]!.file);
const firstCss = [...new Set([...first].flatMap((key) => manifest[key]!.css ?? []))];

console.log('First screen (loaded by index.html):');
const js = row('  JavaScript', firstJs);
const css = firstCss.length > 0 ? row('  CSS', firstCss) : { raw: 0, gzip: 0 };
const firstGzip = js.gzip + css.gzip;

console.log('Loaded later (dynamic imports):');
for (const key of Object.keys(manifest)
  .filter((k) => manifest[k]!.isDynamicEntry)
  .sort()) {
  const files = [...closure(key)].filter((k) => !first.has(k)).map((k) => manifest[k]!.file);
  const chunk = manifest[key]!;
  row(`  ${chunk.src ?? chunk.name ?? key}`, files);
}

const verdict = firstGzip <= BUDGET_GZIP_BYTES ? 'within' : 'OVER';
console.log(
  `First screen (JavaScript and CSS): ${kB(firstGzip)} gzipped, ${verdict} the budget of ${kB(BUDGET_GZIP_BYTES)}.`,
);
if (firstGzip > BUDGET_GZIP_BYTES) process.exit(1);
