import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const ROOT = path.resolve(import.meta.dirname, '../..');

const PREFIX = 'vellum-test-';
/** Older than this, a copy was left by a test process that did not exit normally (a signal). */
const STALE_MS = 6 * 60 * 60_000;

let out: string | undefined;

/**
 * The `node` arguments that run src/NAME.ts as its own process, as JavaScript, the way `npm start`
 * runs the build. The source is transpiled once per test process by esbuild (file by
 * file, as tsx does it, so worker threads still find their modules beside their callers). Through
 * tsx's loader each spawned process cost ~1.5 s more CPU (a CLI run 2.3 s instead of 0.9 s), and the
 * CLI and server tests spawn dozens. Under scripts/test.mjs the runner has transpiled src/ already.
 */
export function entryArgs(name: 'main' | 'cli'): string[] {
  // Run by scripts/test.mjs, this module is itself compiled, beside the compiled src/: use that,
  // with source maps when the runner made them (VELLUM_TEST_SOURCE_MAPS).
  if (import.meta.url.endsWith('.js')) {
    const maps = process.env.VELLUM_TEST_SOURCE_MAPS === '0' ? [] : ['--enable-source-maps'];
    return [...maps, fileURLToPath(new URL(`../../src/${name}.js`, import.meta.url))];
  }
  out ??= transpile();
  return ['--enable-source-maps', path.join(out, 'src', `${name}.js`)];
}

function transpile(): string {
  // Inside node_modules so that the output's bare imports resolve to the project's packages.
  const cache = path.join(ROOT, 'node_modules', '.cache');
  fs.mkdirSync(cache, { recursive: true });
  removeStale(cache);
  const dir = fs.mkdtempSync(path.join(cache, PREFIX));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  // Below node_modules no package.json of ours applies: say the files are ES modules.
  fs.writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}\n');
  // The web client is found beside src/ (web.routes.ts), as from the checkout and from the build.
  fs.symlinkSync(path.join(ROOT, 'dist'), path.join(dir, 'dist'), 'dir');
  const sources = (fs.readdirSync(path.join(ROOT, 'src'), { recursive: true }) as string[])
    .filter((file) => file.endsWith('.ts'))
    .map((file) => path.join(ROOT, 'src', file));
  buildSync({
    entryPoints: sources,
    outdir: path.join(dir, 'src'),
    outbase: path.join(ROOT, 'src'),
    format: 'esm',
    platform: 'node',
    target: 'node20',
    tsconfig: path.join(ROOT, 'tsconfig.json'),
    sourcemap: 'inline',
    logLevel: 'error',
  });
  return dir;
}

function removeStale(cache: string): void {
  for (const name of fs.readdirSync(cache)) {
    if (!name.startsWith(PREFIX)) continue;
    const dir = path.join(cache, name);
    try {
      if (Date.now() - fs.statSync(dir).mtimeMs > STALE_MS) fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // Removed by another test process meanwhile.
    }
  }
}
