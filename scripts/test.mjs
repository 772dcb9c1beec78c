// The test runner.
//
//   npm test                          everything: every test file under test/ and web/test/ on SQLite
//                                     and, when TEST_DATABASE_URL is set, on PostgreSQL too (the Redis
//                                     tests run when TEST_REDIS_URL is set, and fail when it is set but
//                                     Redis does not answer), the stall tests among them; beside
//                                     them, once the image test's build is there, the browser tests
//                                     (web/e2e, Playwright driving the system's Chromium against
//                                     that build, two workers).
//   npm run test:quick                the day-to-day loop (a few minutes): the node tests on SQLite
//                                     only (TEST_DATABASE_URL and TEST_REDIS_URL are ignored), without
//                                     the stall tests, the image test (it builds the app) and the
//                                     browser tests.
//   npm test -- test/notes/diff.test.ts [more files or folders]
//                                     those files only (on PostgreSQL too when TEST_DATABASE_URL is
//                                     set); a web/e2e/*.spec.ts file runs in the browser (after a
//                                     build). Other arguments go to `node --test` (e.g.
//                                     --test-name-pattern=...).
//   npm test -- --no-browser          every node test (as `npm test`), no browser tests.
//   --concurrency=N                   test processes at once (default 2; in a whole run, one more
//                                     once the browser tests beside them are over).
//                                     A whole run puts small files several to a process (see units()).
//   VELLUM_TEST_GROUPS=0              a whole run with every file in a process of its own.
//
// The TypeScript is transpiled once per run, by esbuild, into .test-build/run-<pid>/ (same layout:
// src/, test/, web/test/; removed at exit), and the tests run as plain JavaScript: through tsx's
// loader every test process paid ~1.6 CPU-s more to load the app. Each test file and each entry
// point the tests spawn is a bundle (see transpile()). Tests see their
// source directory as import.meta.dirname (fixtures, the repository root); the app's modules see
// their compiled place as import.meta.url (its worker threads are the .js beside them). Processes
// the tests spawn (test/helpers/entry.ts) run the same compiled src/.
//
// One build per run: test/ops/image.test.ts replays the Dockerfile, which builds the app; it hands
// that build to this runner (VELLUM_TEST_DIST), and the browser tests run against it. Without it
// (the image test not run, or failed), the runner runs `npm run build` itself.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import pg from 'pg';

const ROOT = path.resolve(import.meta.dirname, '..');
process.chdir(ROOT);

function files(dir, suffix) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return files(full, suffix);
    return entry.name.endsWith(suffix) ? [full] : [];
  });
}

const line = '!'.repeat(78);
let args = process.argv.slice(2);
const quick = args.includes('--quick');
// --no-browser: the node tests only (all of them, PostgreSQL and the stall and image tests included).
const noBrowser = args.includes('--no-browser');
// --concurrency=N: test files at once (default 2, one a core of the machine CI runs on).
const concurrencyArg = args.find((a) => a.startsWith('--concurrency='));
const concurrency = concurrencyArg === undefined ? 2 : Number(concurrencyArg.slice('--concurrency='.length));
args = args.filter((a) => a !== '--quick' && a !== '--no-browser' && a !== concurrencyArg);
// A folder named stands for its test files (`npm test -- test/collab`).
args = args.flatMap((a) =>
  !a.startsWith('-') && fs.existsSync(a) && fs.statSync(a).isDirectory()
    ? files(a, a.replace(/\\/g, '/').startsWith('web/e2e') ? '.spec.ts' : '.test.ts').sort()
    : [a],
);
const browserArgs = args.filter((a) => a.startsWith('web/e2e/'));
const namedFiles = args.some((a) => a.endsWith('.ts'));
const nodeFiles = args.filter((a) => a.endsWith('.ts') && !a.startsWith('web/e2e/'));
const nodeOptions = args.filter((a) => !a.endsWith('.ts'));
const env = { ...process.env };
// Source maps (stack traces naming the TypeScript) cost each process ~0.4 CPU-s to read at start
// (Node 20 parses them eagerly): about a tenth of a whole run's CPU. On when files are named (the
// run one debugs), off for whole runs, which say how to get them when something fails.
// VELLUM_TEST_SOURCE_MAPS=1|0 decides otherwise; the processes the tests spawn follow it.
const sourceMaps = (env.VELLUM_TEST_SOURCE_MAPS ?? (args.some((a) => a.endsWith('.ts')) ? '1' : '0')) === '1';
env.VELLUM_TEST_SOURCE_MAPS = sourceMaps ? '1' : '0';
if (quick) {
  delete env.TEST_DATABASE_URL;
  delete env.TEST_REDIS_URL;
}

const EXAMPLE =
  'TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test TEST_REDIS_URL=redis://127.0.0.1:6379 npm test';
if (quick) {
  console.warn(
    `${line}\n!! test:quick: SQLite only; no PostgreSQL, Redis, stall, image or browser tests.\n!! Before a merge: ${EXAMPLE}\n${line}`,
  );
} else {
  if (!env.TEST_DATABASE_URL) {
    console.warn(
      `${line}\n!! TEST_DATABASE_URL is not set: PostgreSQL tests are SKIPPED; only SQLite runs.\n!! Example: ${EXAMPLE}\n${line}`,
    );
  }
  if (!env.TEST_REDIS_URL) {
    console.warn(
      `${line}\n!! TEST_REDIS_URL is not set: Redis tests (shared counters, breaker recovery) are SKIPPED.\n!! Example: ${EXAMPLE}\n${line}`,
    );
  }
}

// Stall tests (*stall.test.ts) run beside the others: they assert what holds on a busy machine too
// (helpers/stall.ts: /healthz answered while the hostile request is in flight, no turn of the event
// loop over a bound of main-thread CPU time). Their wall-clock figures are `npm run bench:stall`'s.
// test:quick leaves them out (minutes of CPU for what a change rarely touches).
const isStall = (file) => file.endsWith('stall.test.ts');
const IMAGE_TEST = path.join('test', 'ops', 'image.test.ts');

// --- Transpiling --------------------------------------------------------------------------------

const BUILD_ROOT = path.join(ROOT, '.test-build');
const out = path.join(BUILD_ROOT, `run-${process.pid}`);

/** Leftovers of runs that did not exit normally (their process is gone). */
function removeStale() {
  if (!fs.existsSync(BUILD_ROOT)) return;
  for (const name of fs.readdirSync(BUILD_ROOT)) {
    const pid = Number(/^run-(\d+)$/.exec(name)?.[1]);
    if (!pid) continue;
    try {
      process.kill(pid, 0);
    } catch {
      fs.rmSync(path.join(BUILD_ROOT, name), { recursive: true, force: true });
    }
  }
}

/**
 * import.meta.dirname in a test is its source directory: tests find the repository root and their
 * fixtures from there. (The app's own modules keep import.meta.url, their compiled place.)
 */
const sourceDirname = {
  name: 'source-dirname',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (loaded) => ({
      contents: fs
        .readFileSync(loaded.path, 'utf8')
        .replaceAll('import.meta.dirname', JSON.stringify(path.dirname(loaded.path))),
      loader: 'ts',
    }));
  },
};

/**
 * For the bundles (below): every module keeps the place it would have unbundled. In our TypeScript,
 * import.meta.dirname is the source directory (as above) and import.meta.url the module's
 * file-by-file compiled place, where its worker threads (src/shared/worker.ts), the web client and
 * the spawned entry points are found; in a package, __dirname, __filename and import.meta.url are
 * its own file's (static files, worker scripts). A package loaded with import() stays Node's to
 * load, from its own file: esbuild gives a CommonJS package's chunk only a default export there,
 * where Node finds the named ones.
 */
const inPlace = {
  name: 'in-place',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.kind !== 'dynamic-import' || args.pluginData?.inPlace) return undefined;
      const { importer, kind, resolveDir } = args;
      const found = await build.resolve(args.path, { importer, kind, resolveDir, pluginData: { inPlace: true } });
      if (found.errors.length > 0 || found.external || !found.path.includes(`${path.sep}node_modules${path.sep}`))
        return undefined;
      return { path: found.path, external: true };
    });
    build.onLoad({ filter: /\.ts$/ }, (loaded) => ({
      contents: fs
        .readFileSync(loaded.path, 'utf8')
        .replaceAll('import.meta.dirname', JSON.stringify(path.dirname(loaded.path)))
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(compiled(path.relative(ROOT, loaded.path))).href)),
      loader: 'ts',
    }));
    build.onLoad({ filter: /[\\/]node_modules[\\/].*\.[cm]?js$/ }, (loaded) => {
      const text = fs.readFileSync(loaded.path, 'utf8');
      if (!/__dirname|__filename|import\.meta\.url/.test(text)) return undefined;
      return {
        contents: text
          .replace(/\b__dirname\b/g, JSON.stringify(path.dirname(loaded.path)))
          .replace(/\b__filename\b/g, JSON.stringify(loaded.path))
          .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(loaded.path).href)),
        loader: 'js',
      };
    });
  },
};

/** VELLUM_TEST_BUNDLE=0: the node tests and spawned entry points file by file, as before the bundles. */
const bundled = process.env.VELLUM_TEST_BUNDLE !== '0';

async function transpile() {
  removeStale();
  fs.mkdirSync(out, { recursive: true });
  process.on('exit', () => fs.rmSync(out, { recursive: true, force: true }));
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));
  // The app finds its web client beside src/ (src/web/web.routes.ts), as in the checkout.
  fs.symlinkSync(path.join(ROOT, 'dist'), path.join(out, 'dist'), 'dir');
  const common = {
    outbase: ROOT,
    outdir: out,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: sourceMaps ? 'inline' : false,
    logLevel: 'error',
  };
  // Each test file and each spawned entry point (src/main.ts, src/cli.ts) as one bundle, the
  // packages in it (chunks shared between them): a process then reads a few files instead of
  // ~1,500 modules (~1,250 of them packages'), and loading the app costs ~0.7 CPU-s instead of
  // ~2.0 — for each of the ~150 test files and each server or CLI they start. Native addons stay
  // packages. Stack traces still name the TypeScript (source maps, without the sources' text,
  // which are on disk).
  const bundle = {
    ...common,
    bundle: true,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    sourcesContent: false,
    // Also left to Node: packages that must be one copy in the process while a package loaded with
    // import() (Node's, see inPlace) uses them too — the Yjs family (@hocuspocus/extension-redis
    // brings its own imports of Yjs and the Hocuspocus server; two copies break their checks).
    external: [
      'better-sqlite3',
      'argon2',
      'pg-native',
      'yjs',
      'y-protocols',
      'y-protocols/*',
      'lib0',
      'lib0/*',
      '@hocuspocus/*',
    ],
    // CommonJS packages in an ES module call require: Node's, from the bundle's place (resolved up
    // to the repository's node_modules).
    banner: {
      js: "import { createRequire as __vellumCreateRequire } from 'node:module'; const require = __vellumCreateRequire(import.meta.url);",
    },
    plugins: [inPlace],
  };
  const entries = [path.join('src', 'main.ts'), path.join('src', 'cli.ts')];
  const tests = files('test', '.test.ts');
  // File by file (no bundling) besides: each module stays where its relative imports and workers
  // expect it (worker threads, the migrated templates, helpers a test runs as a process).
  await Promise.all([
    build({
      ...common,
      entryPoints: files('src', '.ts').filter((f) => !bundled || !entries.includes(f)),
      tsconfig: 'tsconfig.json',
    }),
    build({
      ...common,
      entryPoints: files('test', '.ts').filter((f) => !bundled || !tests.includes(f)),
      tsconfig: 'tsconfig.json',
      plugins: [sourceDirname],
    }),
    ...(bundled
      ? [
          build({ ...bundle, entryPoints: tests, tsconfig: 'tsconfig.json' }),
          build({ ...bundle, entryPoints: entries, tsconfig: 'tsconfig.json', chunkNames: 'chunks/entry-[hash]' }),
        ]
      : []),
    // web/test imports the client's modules the bundler's way (no extensions): each test is bundled
    // with the client code it uses; packages stay imports.
    build({
      ...common,
      entryPoints: files('web/test', '.test.ts'),
      tsconfig: 'web/test/tsconfig.json',
      bundle: true,
      packages: 'external',
      plugins: [sourceDirname],
    }),
  ]);
}

const compiled = (file) => path.join(out, file.replace(/\.ts$/, '.js'));

// --- Where the time goes ------------------------------------------------------------------------

// Each test process records its wall and CPU seconds at exit (scripts/file-times.mjs); the slowest
// files by CPU are printed after the node tests, and VELLUM_TEST_TIMES_KEEP=<file> keeps the list.
const timesFile = path.join(BUILD_ROOT, `times-${process.pid}.jsonl`);
env.VELLUM_TEST_TIMES = timesFile;
env.NODE_OPTIONS =
  `${env.NODE_OPTIONS ?? ''} --import=${JSON.stringify(path.join(ROOT, 'scripts', 'file-times.mjs'))}`.trim();

/** Each file's wall seconds in the last run that ran it (kept in .test-build/, which git ignores). */
const LAST_TIMES = path.join(BUILD_ROOT, 'last-times.json');

/**
 * Each file's wall seconds in one whole run (a fresh-clone CI run, 2026-11-27: the order is what
 * counts), for a checkout that has no run of its own yet (CI's fresh clone).
 */
const SEED_TIMES = path.join(ROOT, 'scripts', 'test-times.json');

const readTimes = (file) => (fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {});

// --- Groups -------------------------------------------------------------------------------------

/**
 * In a whole run, small files share a process, several to a group: each file alone paid for
 * loading the app and for V8 warming to its code again (20 small files: 108 CPU-s one to a
 * process, 62 in one). A group imports its files each inside a suite named for the file, so that a
 * file's top-level hooks (frozenDate's mock clock, say) stay its own and its report says which
 * file a test is in; the files run one after another, as they are listed.
 *
 * A file runs alone when what it does is the process's, not a suite's: it changes process.env or
 * a global (web/test/client.test.ts puts a fake document there) or listens on process, reads the
 * process's memory or its main thread's CPU (the stall and memory tests), is long enough to be a
 * group by itself (SOLO_WALL_S), is the image test, or says `test-runner: own process`.
 * VELLUM_TEST_GROUPS=0 runs every file alone (to rule a neighbour out).
 */
const grouping = process.env.VELLUM_TEST_GROUPS !== '0';
const GROUP_WALL_S = 40;
const SOLO_WALL_S = 20;
/** A file not in the seed's times: grouped, counted as this many seconds. */
const UNKNOWN_WALL_S = 5;
const OWN_PROCESS = new RegExp(
  [
    // the environment, globals, the process's listeners and state
    /process\.env\.\w+\s*=[^=]|delete process\.env|globalThis\.\w+\s*=[^=]|\(globalThis,/.source,
    /process\.(on|once)\(|process\.chdir|process\.exitCode/.source,
    // the process's memory, its main thread's CPU (helpers/stall.ts)
    /VmHWM|VmRSS|memoryUsage\(|helpers\/stall/.source,
    /test-runner: own process/.source,
  ].join('|'),
);

/** Group entry files, by their compiled path: the source files in each. */
const groupFiles = new Map();

/**
 * The units of a whole run, each `{ run, files }` (run: the compiled file a process runs): the files
 * that run alone, and groups of the rest, made in name order up to GROUP_WALL_S of the seed's times
 * (so that a checkout and CI make the same groups).
 */
function units(list, first) {
  const seed = readTimes(SEED_TIMES);
  const alone = (f) =>
    !grouping ||
    f === first ||
    f === IMAGE_TEST ||
    isStall(f) ||
    (seed[f] ?? 0) >= SOLO_WALL_S ||
    OWN_PROCESS.test(fs.readFileSync(f, 'utf8'));
  const made = [];
  let group = [];
  let groupWall = 0;
  const close = () => {
    if (group.length === 1) made.push({ run: compiled(group[0]), files: group });
    else if (group.length > 1) {
      const entry = path.join(out, 'groups', `group-${groupFiles.size + 1}.test.js`);
      const suites = group.map(
        (f) =>
          `describe(${JSON.stringify(f)}, async () => {\n  await import(${JSON.stringify(pathToFileURL(compiled(f)).href)});\n});`,
      );
      fs.mkdirSync(path.dirname(entry), { recursive: true });
      fs.writeFileSync(entry, `import { describe } from 'node:test';\n${suites.join('\n')}\n`);
      groupFiles.set(entry, group);
      made.push({ run: entry, files: group });
    }
    group = [];
    groupWall = 0;
  };
  for (const f of [...list].sort()) {
    if (alone(f)) {
      made.push({ run: compiled(f), files: [f] });
      continue;
    }
    const wall = seed[f] ?? UNKNOWN_WALL_S;
    if (groupWall + wall > GROUP_WALL_S) close();
    group.push(f);
    groupWall += wall;
  }
  close();
  return made;
}

/**
 * The units in the order to start them: the slowest of the last run first (files it did not run
 * first of all), so that two workers do not end on one long file while the other is idle. `first`
 * goes before all (the image test, whose build the browser tests wait for).
 */
function slowestFirst(list, first) {
  const last = readTimes(fs.existsSync(LAST_TIMES) ? LAST_TIMES : SEED_TIMES);
  const wall = (unit) =>
    unit.files.includes(first)
      ? Number.POSITIVE_INFINITY
      : unit.files.reduce((sum, f) => sum + (last[f] ?? Number.MAX_VALUE), 0);
  return [...list].sort((a, b) => wall(b) - wall(a) || a.files[0].localeCompare(b.files[0]));
}

function reportTimes() {
  if (!fs.existsSync(timesFile)) return;
  const rows = fs
    .readFileSync(timesFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  if (process.env.VELLUM_TEST_TIMES_KEEP) fs.copyFileSync(timesFile, process.env.VELLUM_TEST_TIMES_KEEP);
  // For the next run's order (slowestFirst); a group's time is shared among its files as the
  // seed's times share it.
  const last = readTimes(LAST_TIMES);
  const seed = readTimes(SEED_TIMES);
  for (const r of rows) {
    const members = groupFiles.get(r.file);
    if (members === undefined) {
      last[path.relative(out, r.file).replace(/\.js$/, '.ts')] = r.wallS;
      continue;
    }
    const weight = (f) => seed[f] ?? UNKNOWN_WALL_S;
    const sum = members.reduce((total, f) => total + weight(f), 0);
    for (const f of members) last[f] = (r.wallS * weight(f)) / sum;
  }
  fs.writeFileSync(LAST_TIMES, JSON.stringify(last));
  fs.rmSync(timesFile, { force: true });
  if (rows.length < 2) return;
  const cpu = (r) => r.cpuS + (r.childCpuS ?? 0);
  rows.sort((a, b) => cpu(b) - cpu(a));
  const total = rows.reduce((sum, r) => sum + r.cpuS, 0);
  const children = rows.reduce((sum, r) => sum + (r.childCpuS ?? 0), 0);
  console.log(
    `\nTest files: ${rows.length}, ${(total + children).toFixed(0)} CPU-s in all (${total.toFixed(0)} in the test processes and their threads, ${children.toFixed(0)} in the processes they spawned). Slowest by CPU:`,
  );
  console.log('  CPU-s (own + spawned)  wall-s  file');
  for (const r of rows.slice(0, 25)) {
    const members = groupFiles.get(r.file);
    const name =
      members === undefined
        ? path.relative(out, r.file)
        : `${path.relative(out, r.file)} (${members.length} files: ${members.map((f) => path.basename(f, '.test.ts')).join(', ')})`;
    const own = `${r.cpuS.toFixed(1)} + ${(r.childCpuS ?? 0).toFixed(1)}`;
    console.log(
      `${cpu(r).toFixed(1).padStart(7)} ${`(${own})`.padStart(15)} ${r.wallS.toFixed(1).padStart(7)}  ${name}`,
    );
  }
}

// --- Running ------------------------------------------------------------------------------------

/**
 * Runs a command to its end: its output to ours, or to `sink` (the browser tests' output while
 * the node tests print theirs, so that neither is cut into the other). Resolves to its status.
 */
function run(command, argv, options, sink) {
  return new Promise((resolve) => {
    const child = spawn(command, argv, {
      ...options,
      stdio: sink === undefined ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    });
    if (sink !== undefined) {
      child.stdout.on('data', sink);
      child.stderr.on('data', sink);
    }
    child.on('error', () => resolve(1));
    child.on('close', (code) => resolve(code ?? 1));
  });
}

const testArgs = () => [
  ...(sourceMaps ? ['--enable-source-maps'] : []),
  '--test',
  '--test-reporter=spec',
  ...nodeOptions,
];

/**
 * One file in a process of its own, run directly: node:test runs a file's tests when it is the
 * program, with the same reporter and a failing status on failure. Through `node --test` each
 * file had a second process, the runner, at ~0.2 CPU-s: 35 CPU-s a whole run.
 */
const fileArgs = (run) => [
  ...(sourceMaps ? ['--enable-source-maps'] : []),
  '--test-reporter=spec',
  ...nodeOptions,
  run,
];

/** Named files: one `node --test`, its output as it comes. */
const runNamed = (concurrency, list) =>
  list.length === 0
    ? Promise.resolve(0)
    : run(process.execPath, [...testArgs(), `--test-concurrency=${concurrency}`, ...list.map(compiled)], { env });

/**
 * A whole run: the units in the order given, `concurrency` at a time, each a process of its own
 * (fileArgs; one `node --test` of them all sorts them by name: the long files could then start
 * last, and the image test, whose build the browser tests wait for, late). Each unit's report is
 * printed whole when it ends; the counts are added up at the end.
 */
async function runWhole(concurrency, list, oneMoreAfter) {
  const fileCount = list.reduce((sum, unit) => sum + unit.files.length, 0);
  const started = performance.now();
  const totals = new Map();
  const failed = [];
  let next = 0;
  const worker = async () => {
    while (next < list.length) {
      const unit = list[next++];
      let output = '';
      const status = await run(process.execPath, fileArgs(unit.run), { env }, (chunk) => {
        output += chunk;
      });
      const report = output.split('\n').filter((text) => {
        const count = /^ℹ (\w+) ([\d.]+)$/.exec(text);
        if (count === null) return true;
        totals.set(count[1], (totals.get(count[1]) ?? 0) + Number(count[2]));
        return false;
      });
      process.stdout.write(`${report.join('\n').trimEnd()}\n`);
      if (status !== 0) failed.push(unit);
    }
  };
  const workers = Array.from({ length: concurrency }, worker);
  // Once the browser tests are over, their share of the machine goes to one more file at a time.
  // Never waited for by itself: the browser tests may be waiting for these to end (no image build).
  let more;
  oneMoreAfter?.then(
    () => {
      if (next < list.length) more = worker();
    },
    () => {},
  );
  await Promise.all(workers);
  await more;
  for (const [name, count] of totals) if (name !== 'duration_ms') console.log(`ℹ ${name} ${count}`);
  console.log(
    `ℹ files ${fileCount} in ${list.length} processes, ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  const named = (unit) =>
    unit.files.length === 1
      ? `  ${unit.files[0]}`
      : `  a group (its failing suite above is named for its file): ${unit.files.join(', ')}`;
  if (failed.length > 0) console.log(`✖ files with failures:\n${failed.map(named).join('\n')}`);
  return failed.length > 0 ? 1 : 0;
}

// --- Migrated templates ---------------------------------------------------------------------------

// One migrated SQLite file and, with TEST_DATABASE_URL, one migrated PostgreSQL database per run:
// each suite's scratch database is a copy (test/helpers/databases.ts), not the migrations again.
let pgTemplate;
async function makeTemplates() {
  const { openDatabase } = await import(pathToFileURL(path.join(out, 'src', 'db', 'database.js')).href);
  const { migrateToLatest } = await import(pathToFileURL(path.join(out, 'src', 'db', 'migrate.js')).href);
  const migrate = async (config) => {
    const database = openDatabase(config);
    try {
      await migrateToLatest(database.db);
    } finally {
      await database.close();
    }
  };
  const sqliteFile = path.join(out, 'template.db');
  await migrate({ kind: 'sqlite', filename: sqliteFile });
  env.VELLUM_TEST_SQLITE_TEMPLATE = sqliteFile;
  if (!env.TEST_DATABASE_URL) return;
  const name = `vellum_template_${process.pid}`;
  const admin = new pg.Client({ connectionString: env.TEST_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  pgTemplate = name;
  const url = new URL(env.TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  await migrate({ kind: 'postgres', url: url.toString(), poolMax: 1 });
  env.VELLUM_TEST_PG_TEMPLATE = name;
}

async function dropTemplates() {
  if (pgTemplate === undefined) return;
  const admin = new pg.Client({ connectionString: env.TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${pgTemplate} WITH (FORCE)`).finally(() => admin.end());
}

const imageDist = path.join(out, 'image', 'dist');
env.VELLUM_TEST_DIST = imageDist;

// Debian's headless shell when there, else the full Chromium: as web/e2e/playwright.config.ts chooses.
const chromium =
  env.CHROMIUM_PATH ??
  ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find((file) => fs.existsSync(file)) ??
  '/usr/bin/chromium';
const wantBrowser = !quick && !noBrowser && (!namedFiles || browserArgs.length > 0);
const browserSkipped = wantBrowser && !fs.existsSync(chromium);
// A whole run starts the browser tests as soon as the image test has handed over its build, beside
// the node tests still running: each half leaves a core idle much of the time (the node tests wait
// on timers, servers and PostgreSQL; the browser tests on the page), and one after the other they
// took 24 minutes in CI. VELLUM_TEST_SERIAL=1 runs them one after the other.
const overlap = wantBrowser && !browserSkipped && !namedFiles && env.VELLUM_TEST_SERIAL !== '1';

/** Output held back until the node tests have printed theirs; after that, printed as it comes. */
const held = { chunks: [], live: !overlap };
const browserOutput = (chunk) => (held.live ? process.stdout.write(chunk) : held.chunks.push(chunk));
let nodeDone = false;

async function browserTests() {
  let dist = path.join(ROOT, 'dist');
  // The image test's build, once it is there (or the node tests are over without it).
  while (overlap && !nodeDone && !fs.existsSync(path.join(imageDist, 'main.js')))
    await new Promise((resolve) => setTimeout(resolve, 500));
  if (fs.existsSync(path.join(imageDist, 'main.js'))) {
    dist = imageDist;
    browserOutput(`Browser tests: the build of the image test (${path.relative(ROOT, dist)}).\n`);
  } else {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const built = await run(npm, ['run', '-s', 'build'], { env }, overlap ? browserOutput : undefined);
    if (built !== 0) return built;
  }
  return run(
    process.execPath,
    ['node_modules/@playwright/test/cli.js', 'test', '--config', 'web/e2e/playwright.config.ts', ...browserArgs],
    { env: { ...env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1', CHROMIUM_PATH: chromium, VELLUM_E2E_DIST: dist } },
    overlap ? browserOutput : undefined,
  );
}

/** `browserOver`: settles when the browser tests running beside are over (a whole run). */
async function nodeTests(browserOver) {
  await transpile();
  await makeTemplates();
  const status = namedFiles
    ? await runNamed(
        concurrency,
        nodeFiles.map((f) => path.relative(ROOT, path.resolve(f))),
      )
    : await runWhole(
        concurrency,
        slowestFirst(
          units(
            [...files('test', '.test.ts'), ...files('web/test', '.test.ts')].filter(
              (f) => !(quick && (f === IMAGE_TEST || isStall(f))),
            ),
            overlap ? IMAGE_TEST : undefined,
          ),
          overlap ? IMAGE_TEST : undefined,
        ),
        browserOver,
      );
  reportTimes();
  await dropTemplates();
  if (status !== 0 && !sourceMaps)
    console.warn(
      `${line}\n!! Stack traces above name the compiled JavaScript (source maps are off in whole runs).\n!! For TypeScript lines, run the failing file by name: npm test -- test/<file>.test.ts\n${line}`,
    );
  return status;
}

const runsNode = !namedFiles || nodeFiles.length > 0;
const runsBrowser = wantBrowser && !browserSkipped;
const runStarted = performance.now();
let status;
if (overlap) {
  const browser = browserTests();
  const nodeStatus = await nodeTests(browser);
  nodeDone = true;
  if (held.chunks.length > 0) console.log('\n--- Browser tests (started while the node tests ran) ---');
  for (const chunk of held.chunks) process.stdout.write(chunk);
  held.live = true;
  const browserStatus = await browser;
  status = nodeStatus !== 0 ? nodeStatus : browserStatus;
} else {
  status = runsNode ? await nodeTests() : 0;
  nodeDone = true;
  if (runsBrowser) {
    const browserStatus = await browserTests();
    if (status === 0) status = browserStatus;
  }
}

console.log(
  `npm test: ${((performance.now() - runStarted) / 1000).toFixed(0)} s from the first transpile to the last test.`,
);
if (!quick && !env.TEST_DATABASE_URL)
  console.warn('!! Reminder: PostgreSQL tests were SKIPPED (TEST_DATABASE_URL not set).');
if (!quick && !env.TEST_REDIS_URL) console.warn('!! Reminder: Redis tests were SKIPPED (TEST_REDIS_URL not set).');
if (browserSkipped) {
  console.warn(
    `${line}\n!! BROWSER TESTS SKIPPED: no Chromium at ${chromium}.\n!! Install it (Debian: apt-get install -y chromium-headless-shell) or set CHROMIUM_PATH.\n${line}`,
  );
}
process.exit(status);
