// Vellum benchmark runner: `npm run bench -- [options]`. See BENCHMARKS.md for what it measures.
//
// It builds the service, starts `node dist/main.js` on a fresh database (a temp SQLite file, or a
// new PostgreSQL database that it drops afterwards), seeds it over HTTP, and drives it with
// autocannon from this process. A bare Fastify server in its own process is measured the same way
// as the yardstick. Every process it starts is wrapped in `timeout` and stopped before it exits.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import {
  mergeRuns,
  round,
  runLoad,
  withoutSamples,
  type LoadRequest,
  type LoadResult,
  type RawLoadResult,
} from './lib/load.js';
import {
  cpuSeconds,
  freePort,
  machineBusySeconds,
  startChild,
  stopAll,
  stopChild,
  waitForHttp,
  type Child,
} from './lib/processes.js';
import { renderMarkdown, updateBenchmarksMd } from './lib/report.js';
import { BENCH_PASSWORD, createApi, inParallel, prose, type Api } from './lib/seed.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DEFAULT_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/test';
/** Nothing this runner starts may live longer than this. */
const MAX_RUN_SECONDS = 45 * 60;

const { values: args } = parseArgs({
  options: {
    db: { type: 'string' },
    workers: { type: 'string', default: '1' },
    duration: { type: 'string', default: '6' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '10' },
    'storm-connections': { type: 'string', default: '64' },
    'storm-rate': { type: 'string', default: '200' },
    history: { type: 'string', default: '10000' },
    only: { type: 'string' },
    skip: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    'log-level': { type: 'string', default: 'info' },
    label: { type: 'string' },
    tag: { type: 'string' },
    'server-env': { type: 'string', multiple: true },
    build: { type: 'boolean', default: true },
    'no-build': { type: 'boolean', default: false },
    write: { type: 'boolean', default: true },
    'no-write': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});

if (args.help) {
  process.stdout.write(`Usage: npm run bench -- [options]
  --db sqlite|postgres     database (default sqlite; postgres when BENCH_DATABASE_URL is set)
                           PostgreSQL: a fresh database is created from BENCH_DATABASE_URL
                           (default ${DEFAULT_ADMIN_URL}) and dropped at the end
  --workers N              also measure GET /api/notes/{id} with WORKERS=N (default 1: skip)
  --duration S             seconds measured per scenario (default 6)
  --warmup S               seconds of discarded warm-up per scenario (default 2)
  --connections N          autocannon connections (default 10)
  --storm-connections N    connections of the login storm (default 64)
  --storm-rate R           also a paced storm of R logins/s in all (default 200, ~10x what is accepted; 0: skip)
  --history N              versions in the deep-history note (default 10000)
  --only a,b               run only these scenarios (${'me, notes-list, note-get, version-post, versions-first, versions-deepest, search, login, storm'};
                           history: bench/history.ts, search-scale: bench/search.ts, organise: bench/organise.ts,
                           attachments: bench/attachments.ts, dav: bench/dav.ts, events: bench/events.ts,
                           each with its own server)
  --skip a,b               run all but these (results are still written, unlike with --only)
  --cpu-prof               run the server under node --cpu-prof (profile lands in bench/results/profiles/)
  --log-level L            the server's LOG_LEVEL (default info, written to a temp file)
  --label TEXT             a note stored with the results (e.g. "before verifier cache")
  --tag NAME               write bench/results/<db>-<date>-NAME.json and leave BENCHMARKS.md alone
  --server-env K=V         an extra environment variable for the server (repeatable; for experiments)
  --no-build               skip npm run build
  --no-write               print only; do not write bench/results/*.json or BENCHMARKS.md
`);
  process.exit(0);
}

const dbKind = args.db ?? (process.env.BENCH_DATABASE_URL ? 'postgres' : 'sqlite');
if (dbKind !== 'sqlite' && dbKind !== 'postgres') throw new Error('--db must be sqlite or postgres');
const positive = (name: string, raw: string) => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
  return n;
};
const settings = {
  db: dbKind,
  workers: positive('workers', args.workers!),
  duration: positive('duration', args.duration!),
  warmup: Number(args.warmup),
  connections: positive('connections', args.connections!),
  stormConnections: positive('storm-connections', args['storm-connections']!),
  stormRate: Number(args['storm-rate']),
  history: positive('history', args.history!),
  cpuProf: args['cpu-prof']!,
  logLevel: args['log-level']!,
  serverEnv: Object.fromEntries(
    (args['server-env'] ?? []).map((kv) => {
      const at = kv.indexOf('=');
      if (at < 1) throw new Error(`--server-env wants K=V, got "${kv}"`);
      return [kv.slice(0, at), kv.slice(at + 1)];
    }),
  ) as Record<string, string>,
};
const SCENARIOS = [
  'me',
  'notes-list',
  'note-get',
  'version-post',
  'versions-first',
  'versions-deepest',
  'search',
  'login',
  'storm',
  'history',
  'search-scale',
  'organise',
  'attachments',
  'dav',
  'events',
] as const;
/** Benches with their own script and server, run after the scenarios above (their output is kept in bench/results). */
const SCRIPT_BENCHES: ReadonlyArray<{ id: ScenarioId; script: string; args: string[] }> = [
  { id: 'history', script: 'bench/history.ts', args: ['--no-build'] },
  { id: 'search-scale', script: 'bench/search.ts', args: ['--no-write'] },
  { id: 'organise', script: 'bench/organise.ts', args: ['--no-write'] },
  { id: 'attachments', script: 'bench/attachments.ts', args: ['--no-write'] },
  { id: 'dav', script: 'bench/dav.ts', args: ['--no-write'] },
  { id: 'events', script: 'bench/events.ts', args: ['--no-write'] },
];
type ScenarioId = (typeof SCENARIOS)[number];
const listed = (option: 'only' | 'skip') =>
  (args[option] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '') as ScenarioId[];
for (const option of ['only', 'skip'] as const) {
  for (const id of listed(option))
    if (!SCENARIOS.includes(id)) throw new Error(`--${option}: unknown scenario "${id}"`);
}
const skipped = new Set(listed('skip'));
const selected = new Set<ScenarioId>(
  (args.only === undefined ? [...SCENARIOS] : listed('only')).filter((id) => !skipped.has(id)),
);
const write = args.write! && !args['no-write'] && args.only === undefined && !settings.cpuProf;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-bench-'));
const log = (message: string) => process.stdout.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

// ---------------------------------------------------------------------------------------------
// Database

interface BenchDatabase {
  url: string;
  describe: string;
  drop(): Promise<void>;
}

async function createDatabase(): Promise<BenchDatabase> {
  if (dbKind === 'sqlite') {
    const file = path.join(tmp, 'vellum.db');
    return { url: `sqlite:${file}`, describe: 'SQLite (temp file, WAL)', drop: async () => {} };
  }
  const adminUrl = process.env.BENCH_DATABASE_URL ?? DEFAULT_ADMIN_URL;
  const name = `vellum_bench_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const version = (await admin.query<{ server_version: string }>('show server_version')).rows[0]!.server_version;
  const maxConnections = (await admin.query<{ max_connections: string }>('show max_connections')).rows[0]!
    .max_connections;
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    describe: `PostgreSQL ${version} (fresh database, max_connections ${maxConnections}, pool 10 per process)`,
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Servers

const JWT_SECRET = 'bench-jwt-secret-0123456789abcdef0123456789abcdef';
const CSRF_SECRET = 'bench-csrf-secret-0123456789abcdef0123456789abcdef';

const START_SCRIPT = (
  JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }
).scripts.start;

async function startVellum(databaseUrl: string, workers: number, tag: string): Promise<{ child: Child; url: string }> {
  const port = await freePort();
  // --cpu-prof is not allowed in NODE_OPTIONS: it goes on the script's node command.
  const script = settings.cpuProf
    ? START_SCRIPT.replace(/\bnode /, `node --cpu-prof --cpu-prof-dir=${path.join(ROOT, 'bench/results/profiles')} `)
    : START_SCRIPT;
  // Started exactly as `npm start` starts it (its script, after the build the runner already did),
  // so that what it sets for the process (the allocator's mmap threshold) is measured too.
  const child = startChild(`vellum (${tag})`, ['sh', '-c', script], {
    cwd: ROOT,
    logFile: path.join(tmp, `vellum-${tag}.log`),
    maxSeconds: MAX_RUN_SECONDS,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      RATE_LIMIT: 'off',
      PWNED_PASSWORDS_URL: 'off',
      JWT_SECRET,
      CSRF_SECRET,
      LOG_LEVEL: settings.logLevel,
      WORKERS: String(workers),
      ...settings.serverEnv,
    },
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/readyz`, child, 60_000);
  if (workers > 1) {
    // The first worker answers /readyz before the others listen; the primary logs when all do.
    const deadline = Date.now() + 60_000;
    while (!fs.readFileSync(child.logFile, 'utf8').includes('all workers listening')) {
      if (Date.now() > deadline || child.exited)
        throw new Error(`not all ${workers} workers started; see ${child.logFile}`);
      await sleep(200);
    }
  }
  return { child, url };
}

async function startBaseline(): Promise<{ child: Child; url: string }> {
  const port = await freePort();
  const child = startChild('baseline', ['node', '--import', 'tsx', 'bench/baseline-server.ts'], {
    cwd: ROOT,
    logFile: path.join(tmp, 'baseline.log'),
    maxSeconds: MAX_RUN_SECONDS,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      PORT: String(port),
      BASELINE_MAX_SECONDS: String(MAX_RUN_SECONDS),
    },
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/healthz`, child);
  return { child, url };
}

// ---------------------------------------------------------------------------------------------
// Scenarios

interface Seeded {
  readerToken: string;
  writerToken: string;
  historyToken: string;
  noteId: string;
  writeNoteId: string;
  historyNoteId: string;
}

const NOTE_CONTENT = prose(1024);
const PAGE = 50;

async function seed(api: Api, url: string): Promise<Seeded> {
  const t0 = Date.now();
  for (const user of ['bench_reader', 'bench_writer', 'bench_history', 'bench_login']) await api.signup(user);
  const [readerToken, writerToken, historyToken] = await Promise.all(
    ['bench_reader', 'bench_writer', 'bench_history'].map((u) => api.login(u)),
  );
  const ids: string[] = [];
  await inParallel(8, 100, async (i) => {
    ids[i] = await api.createNote(readerToken!, `Benchmark note ${String(i + 1).padStart(3, '0')}`, prose(1024, i));
  });
  const noteId = ids[42]!;
  const writeNoteId = await api.createNote(writerToken!, 'Write target', NOTE_CONTENT);
  let historyNoteId = '';
  if (selected.has('versions-first') || selected.has('versions-deepest')) {
    historyNoteId = await api.createNote(historyToken!, 'Deep history', prose(256));
    const t1 = Date.now();
    // Versions 2..N from 16 concurrent writers; the service serialises them and numbers stay gapless.
    const writes = await runLoad(
      url,
      {
        method: 'POST',
        path: `/api/notes/${historyNoteId}/versions`,
        headers: { authorization: `Bearer ${historyToken}` },
        body: JSON.stringify({ title: 'Deep history', content: prose(256) }),
      },
      { connections: 16, duration: 0, amount: settings.history - 1 },
    );
    if ((writes.statusCodes['204'] ?? 0) !== settings.history - 1)
      throw new Error(`seeding history: ${JSON.stringify(writes.statusCodes)}`);
    const top = await api.expect(200, 'GET', `/api/notes/${historyNoteId}`, { token: historyToken! });
    if ((top.body as { version: number }).version !== settings.history)
      throw new Error(`history note is at version ${(top.body as { version: number }).version}`);
    log(`seeded ${settings.history} versions in ${((Date.now() - t1) / 1000).toFixed(1)} s`);
  }
  log(`seeding done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return {
    readerToken: readerToken!,
    writerToken: writerToken!,
    historyToken: historyToken!,
    noteId,
    writeNoteId,
    historyNoteId,
  };
}

/** A few seconds of mixed reads after seeding, so the JIT has settled before anything is measured. */
async function warmUp(url: string, s: Pick<Seeded, 'readerToken' | 'noteId'>): Promise<void> {
  const auth = { authorization: `Bearer ${s.readerToken}` };
  const requests: LoadRequest[] = [
    { method: 'GET', path: `/api/notes/${s.noteId}`, headers: auth },
    { method: 'GET', path: '/api/auth/me', headers: auth },
    { method: 'GET', path: '/api/notes?limit=20', headers: auth },
  ];
  await runLoad(url, requests[0]!, { connections: settings.connections, duration: SERVER_WARMUP_SECONDS, requests });
}
const SERVER_WARMUP_SECONDS = 6;

/**
 * Waits until the server's password-hash queue is empty. A run that ends leaves the logins it sent
 * queued in the server (which finishes them for clients that are gone); the next run must not
 * start against that backlog.
 */
async function hasherIdle(url: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const text = await (await fetch(`${url}/metrics`)).text().catch(() => '');
    const depth = /^vellum_password_hash_queue_depth (\d+)/m.exec(text);
    if (depth === null || depth[1] === '0') return;
    await sleep(100);
  }
}

/** Where the server's memory is, from its own /metrics (prom-client's default process metrics). */
async function memoryBreakdown(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (name: string, labels = '') => {
    const line = text
      .split('\n')
      .find((l) => l.startsWith(`${name}${labels} `) || (labels === '' && l.startsWith(`${name} `)));
    return line === undefined ? Number.NaN : mb(Number(line.split(' ').at(-1)));
  };
  return {
    rssMb: value('process_resident_memory_bytes'),
    heapTotalMb: value('nodejs_heap_size_total_bytes'),
    heapUsedMb: value('nodejs_heap_size_used_bytes'),
    externalMb: value('nodejs_external_memory_bytes'),
    newSpaceMb: value('nodejs_heap_space_size_total_bytes', '{space="new"}'),
    oldSpaceMb: value('nodejs_heap_space_size_total_bytes', '{space="old"}'),
    codeSpaceMb: value('nodejs_heap_space_size_total_bytes', '{space="code"}'),
  };
}

interface ScenarioDef {
  id: ScenarioId;
  title: string;
  request: LoadRequest;
  /** The status every response must have. */
  status: number;
}

function scenarioDefs(s: Seeded): ScenarioDef[] {
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const deepest = Math.max(0, settings.history - PAGE);
  const defs: ScenarioDef[] = [
    {
      id: 'me',
      title: 'GET /api/auth/me',
      status: 200,
      request: { method: 'GET', path: '/api/auth/me', headers: bearer(s.readerToken) },
    },
    {
      id: 'notes-list',
      title: 'GET /api/notes (100 notes)',
      status: 200,
      request: { method: 'GET', path: '/api/notes', headers: bearer(s.readerToken) },
    },
    {
      id: 'note-get',
      title: 'GET /api/notes/{id} (1 KiB note)',
      status: 200,
      request: { method: 'GET', path: `/api/notes/${s.noteId}`, headers: bearer(s.readerToken) },
    },
    {
      id: 'version-post',
      title: 'POST /api/notes/{id}/versions (1 KiB)',
      status: 204,
      request: {
        method: 'POST',
        path: `/api/notes/${s.writeNoteId}/versions`,
        headers: bearer(s.writerToken),
        body: JSON.stringify({ title: 'Write target', content: NOTE_CONTENT }),
      },
    },
    {
      id: 'versions-first',
      title: `GET /api/notes/{id}/versions, offset 0 (of ${settings.history})`,
      status: 200,
      request: {
        method: 'GET',
        path: `/api/notes/${s.historyNoteId}/versions?limit=${PAGE}&offset=0`,
        headers: bearer(s.historyToken),
      },
    },
    {
      id: 'versions-deepest',
      title: `GET /api/notes/{id}/versions, offset ${deepest} (deepest page)`,
      status: 200,
      request: {
        method: 'GET',
        path: `/api/notes/${s.historyNoteId}/versions?limit=${PAGE}&offset=${deepest}`,
        headers: bearer(s.historyToken),
      },
    },
    {
      // Every one of the reader's 100 notes has both words: a full first page of 20 with snippets.
      id: 'search',
      title: 'GET /api/notes/search?q=quill margin (100 notes, page of 20)',
      status: 200,
      request: { method: 'GET', path: '/api/notes/search?q=quill%20margin', headers: bearer(s.readerToken) },
    },
    {
      id: 'login',
      title: 'POST /api/auth/login (Argon2id verify)',
      status: 200,
      request: {
        method: 'POST',
        path: '/api/auth/login',
        body: JSON.stringify({ username: 'bench_login', password: BENCH_PASSWORD }),
      },
    },
  ];
  return defs.filter((d) => selected.has(d.id));
}

interface Measured extends LoadResult, CpuFigures {
  id: string;
  title: string;
  method: string;
  path: string;
  responseBytes: number;
  unexpectedStatuses: number;
  baseline?: {
    key: string;
    requestsPerSec: number;
    latencyP50Ms: number;
    latencyP99Ms: number;
    serverCpuMsPerRequest: number;
    otherCores: number;
  };
  ratio?: number;
  /** Baseline CPU per request over Vellum's: the req/s ratio the server would reach given a core of its own. */
  cpuRatio?: number;
}

interface CpuFigures {
  /** Server CPU (user + system, all its processes) per completed request: robust to a busy machine. */
  serverCpuMsPerRequest: number;
  /** Server CPU over the run, in cores (1.0 = one core fully busy). */
  serverCores: number;
  /** CPU used meanwhile by processes other than the server and this runner, in cores: noise. */
  otherCores: number;
}

type Figures = LoadResult & CpuFigures;

/** Warm-up (discarded), then the measured run, with the server's CPU use sampled around it. */
async function measure(
  url: string,
  request: LoadRequest,
  server: Child,
  connections = settings.connections,
): Promise<Figures> {
  return (await measureInterleaved(url, server, [request], 1, connections))[0]!;
}

/**
 * Several requests measured in alternating rounds (A B A B ...), each round a slice of the
 * duration, so that a burst of load from elsewhere on the machine hits them alike. Each request's
 * rounds are pooled into one result (latency percentiles over all its responses).
 */
async function measureInterleaved(
  url: string,
  server: Child,
  requests: LoadRequest[],
  rounds: number,
  connections = settings.connections,
  settle: () => Promise<void> = async () => {},
): Promise<Figures[]> {
  if (settings.warmup > 0) {
    for (const request of requests) {
      await runLoad(url, request, { connections, duration: settings.warmup });
      await settle();
    }
  }
  const runs = requests.map(() => [] as RawLoadResult[]);
  const cpu = requests.map(() => ({ server: 0, other: 0, wall: 0 }));
  const slice = Math.max(1, Math.round(settings.duration / rounds));
  for (let round = 0; round < rounds; round++) {
    for (const [i, request] of requests.entries()) {
      const cpu0 = cpuSeconds(server);
      const machine0 = machineBusySeconds();
      const self0 = process.cpuUsage();
      const t0 = performance.now();
      runs[i]!.push(await runLoad(url, request, { connections, duration: slice }));
      const wall = (performance.now() - t0) / 1000;
      await settle();
      const serverCpu = cpuSeconds(server) - cpu0;
      const self = process.cpuUsage(self0);
      cpu[i]!.server += serverCpu;
      cpu[i]!.other += Math.max(0, machineBusySeconds() - machine0 - serverCpu - (self.user + self.system) / 1e6);
      cpu[i]!.wall += wall;
    }
  }
  return runs.map((parts, i) => {
    const merged = mergeRuns(parts);
    const c = cpu[i]!;
    return {
      ...withoutSamples(merged),
      serverCpuMsPerRequest: round((c.server * 1000) / Math.max(1, merged.total), 4),
      serverCores: round(c.server / c.wall, 2),
      otherCores: round(c.other / c.wall, 2),
    };
  });
}

/** What the baseline serves for a scenario: a body of the same size, for the same method and request body. */
function baselineRequest(def: ScenarioDef, responseBytes: number): LoadRequest {
  return {
    method: def.request.method,
    path: `/bytes/${responseBytes}`,
    ...(def.request.body === undefined ? {} : { body: def.request.body }),
    // Same header bytes on the wire, so the yardstick parses what Vellum parses.
    ...(def.request.headers === undefined ? {} : { headers: def.request.headers }),
  };
}

async function responseSize(api: Api, def: ScenarioDef): Promise<number> {
  const token = def.request.headers?.authorization?.slice('Bearer '.length);
  const response = await api.call(def.request.method, def.request.path, {
    ...(token === undefined ? {} : { token }),
    ...(def.request.body === undefined ? {} : { body: JSON.parse(def.request.body) }),
  });
  if (response.status !== def.status)
    throw new Error(`${def.title}: expected ${def.status}, got ${response.status}: ${response.text.slice(0, 200)}`);
  return Buffer.byteLength(response.text);
}

// ---------------------------------------------------------------------------------------------
// Login storm: GET /api/notes/{id} alone, then again while another autocannon hammers login.

async function loginStorm(url: string, server: Child, s: Seeded, rate?: number) {
  const note: LoadRequest = {
    method: 'GET',
    path: `/api/notes/${s.noteId}`,
    headers: { authorization: `Bearer ${s.readerToken}` },
  };
  const loginBody = JSON.stringify({ username: 'bench_login', password: BENCH_PASSWORD });
  await hasherIdle(url);
  // "Alone" is measured half before and half after the storm and pooled, so drift in the machine's
  // other load between the two does not pass for an effect of the storm.
  const half = Math.max(1, Math.round(settings.duration / 2));
  if (settings.warmup > 0) await runLoad(url, note, { connections: settings.connections, duration: settings.warmup });
  const aloneBefore = await runLoad(url, note, { connections: settings.connections, duration: half });
  const stormSeconds = settings.warmup + settings.duration + 2;
  // The storm comes from an autocannon of its own (a separate process), so the GET measurement's
  // client is not slowed down by handling the storm's responses.
  const stormChild = startChild(
    'login storm',
    [
      'node',
      path.join(ROOT, 'node_modules/autocannon/autocannon.js'),
      '--json',
      '-c',
      String(settings.stormConnections),
      '-d',
      String(stormSeconds),
      '-m',
      'POST',
      ...(rate === undefined ? [] : ['--overallRate', String(rate)]),
      '-H',
      'content-type=application/json',
      '-b',
      loginBody,
      `${url}/api/auth/login`,
    ],
    {
      cwd: ROOT,
      logFile: path.join(tmp, `storm-${rate ?? 'flood'}.json`),
      maxSeconds: stormSeconds + 60,
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
    },
  );
  const storm = new Promise<LoadResult>((resolve, reject) => {
    stormChild.proc.once('exit', () => {
      try {
        const text = fs.readFileSync(stormChild.logFile, 'utf8');
        const json = JSON.parse(text.slice(text.indexOf('{'))) as {
          requests: { total: number };
          duration: number;
          errors: number;
          non2xx: number;
          timeouts: number;
          statusCodeStats?: Record<string, { count: number }>;
          latency: { p50: number; p99: number; average: number };
        };
        resolve({
          requestsPerSec: round(json.requests.total / json.duration, 1),
          latencyP50Ms: json.latency.p50,
          latencyP99Ms: json.latency.p99,
          latencyAvgMs: json.latency.average,
          total: json.requests.total,
          non2xx: json.non2xx,
          errors: json.errors,
          timeouts: json.timeouts,
          statusCodes: Object.fromEntries(Object.entries(json.statusCodeStats ?? {}).map(([k, v]) => [k, v.count])),
          durationSec: json.duration,
        });
      } catch (error) {
        reject(new Error(`login storm: no result (${String(error)})`));
      }
    });
  });
  // A few plain requests during the storm check that shed logins carry Retry-After.
  const probes: Array<{ status: number; retryAfter: string | null }> = [];
  const probing = (async () => {
    await sleep(1_500);
    for (let i = 0; i < 10; i++) {
      try {
        const r = await fetch(`${url}/api/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: loginBody,
        });
        await r.arrayBuffer();
        probes.push({ status: r.status, retryAfter: r.headers.get('retry-after') });
      } catch {
        probes.push({ status: 0, retryAfter: null });
      }
      await sleep(300);
    }
  })();
  await sleep(1_000);
  const underStorm = await measure(url, note, server);
  const stormResult = await storm;
  await probing;
  await hasherIdle(url);
  const alone = withoutSamples(
    mergeRuns([aloneBefore, await runLoad(url, note, { connections: settings.connections, duration: half })]),
  );
  log(`storm: GET note alone p99 ${alone.latencyP99Ms} ms, ${alone.requestsPerSec} req/s`);
  log(
    `storm: GET note under storm p99 ${underStorm.latencyP99Ms} ms; login statuses ${JSON.stringify(stormResult.statusCodes)}`,
  );
  const shed = stormResult.statusCodes['503'] ?? 0;
  return {
    alone,
    underStorm,
    p99Ratio: round(underStorm.latencyP99Ms / Math.max(alone.latencyP99Ms, 0.001), 2),
    login: {
      connections: settings.stormConnections,
      rate: rate ?? 'unlimited (closed loop)',
      durationSec: stormResult.durationSec,
      requestsPerSec: stormResult.requestsPerSec,
      statusCodes: stormResult.statusCodes,
      accepted: stormResult.statusCodes['200'] ?? 0,
      shed503: shed,
      errors: stormResult.errors,
      probes,
      retryAfterOn503: probes.filter((p) => p.status === 503).every((p) => p.retryAfter !== null),
    },
  };
}

// ---------------------------------------------------------------------------------------------

function gitCommit(): string {
  const r = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
  const dirty =
    spawnSync('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim() !== '';
  return `${r.stdout.trim()}${dirty ? '+dirty-src' : ''}`;
}

const mb = (bytes: number) => round(bytes / (1024 * 1024), 1);

async function main() {
  const started = Date.now();
  const command = `npm run bench --${
    process.argv
      .slice(2)
      .map((a) => ` ${a}`)
      .join('') || ''
  }`.replace(/ --$/, '');
  if (args.build && !args['no-build']) {
    log('building (npm run build)');
    const build = spawnSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('npm run build failed');
  }
  if (settings.cpuProf) fs.mkdirSync(path.join(ROOT, 'bench/results/profiles'), { recursive: true });

  const database = await createDatabase();
  log(`database: ${database.describe}`);
  const results: Record<string, unknown> = {};
  try {
    const baseline = await startBaseline();
    const vellum = await startVellum(database.url, 1, 'w1');
    const api = createApi(vellum.url);
    const seeded = await seed(api, vellum.url);
    await warmUp(vellum.url, seeded);
    const baselineApi = createApi(baseline.url);

    const scenarios: Measured[] = [];
    const peaks: Array<{ after: string; peakRssMb: number }> = [];
    const notePeak = (after: string) => {
      vellum.child.memory.sample();
      vellum.child.memory.readHighWaterMarks();
      peaks.push({ after, peakRssMb: mb(vellum.child.memory.peakProcess) });
    };
    notePeak('seeding');
    const defs = scenarioDefs(seeded);
    // The two history pages are compared with each other, so they are measured in alternating rounds.
    const groups: ScenarioDef[][] = [];
    for (const def of defs) {
      const last = groups.at(-1);
      if (def.id === 'versions-deepest' && last?.[0]?.id === 'versions-first') last.push(def);
      else groups.push([def]);
    }
    for (const group of groups) {
      const sizes = await Promise.all(group.map((def) => responseSize(api, def)));
      const settle = group.some((d) => d.id === 'login') ? () => hasherIdle(vellum.url) : undefined;
      const results = await measureInterleaved(
        vellum.url,
        vellum.child,
        group.map((d) => d.request),
        group.length > 1 ? 3 : 1,
        settings.connections,
        settle,
      );
      notePeak(group.map((d) => d.id).join('+'));
      for (const [i, def] of group.entries()) {
        const result = results[i]!;
        const responseBytes = sizes[i]!;
        const unexpected = result.total - (result.statusCodes[String(def.status)] ?? 0);
        // The yardstick is measured right after each scenario, so both see the same machine load.
        const base = baselineRequest(def, def.status === 204 ? 0 : responseBytes);
        const key = `${base.method} ${base.path}${base.body === undefined ? '' : ` +${Buffer.byteLength(base.body)}B body`}`;
        await baselineApi.expect(
          def.status === 204 ? 204 : 200,
          base.method,
          base.path,
          base.body === undefined ? {} : { body: JSON.parse(base.body) },
        );
        const b = await measure(baseline.url, base, baseline.child);
        const measured: Measured = {
          id: def.id,
          title: def.title,
          method: def.request.method,
          path: def.request.path.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '{id}'),
          responseBytes,
          ...result,
          unexpectedStatuses: unexpected,
          baseline: {
            key,
            requestsPerSec: b.requestsPerSec,
            latencyP50Ms: b.latencyP50Ms,
            latencyP99Ms: b.latencyP99Ms,
            serverCpuMsPerRequest: b.serverCpuMsPerRequest,
            otherCores: b.otherCores,
          },
          ratio: round(result.requestsPerSec / b.requestsPerSec, 3),
          cpuRatio: round(b.serverCpuMsPerRequest / result.serverCpuMsPerRequest, 3),
        };
        scenarios.push(measured);
        log(
          `${def.title}: ${result.requestsPerSec} req/s, p50 ${result.latencyP50Ms} ms, p99 ${result.latencyP99Ms} ms; ` +
            `${result.serverCpuMsPerRequest} ms CPU/req, other load ${result.otherCores} cores; ` +
            `baseline ${b.requestsPerSec} req/s, ${b.serverCpuMsPerRequest} ms CPU/req -> ${(measured.ratio! * 100).toFixed(1)}% (CPU ${(measured.cpuRatio! * 100).toFixed(1)}%)${unexpected > 0 ? `; ${unexpected} UNEXPECTED statuses ${JSON.stringify(result.statusCodes)}` : ''}`,
        );
      }
    }
    results.scenarios = scenarios;
    if (selected.has('storm')) {
      results.loginStorm = await loginStorm(vellum.url, vellum.child, seeded);
      if (settings.stormRate > 0)
        results.loginStormPaced = await loginStorm(vellum.url, vellum.child, seeded, settings.stormRate);
      notePeak('storm');
    }

    const breakdown = await memoryBreakdown(vellum.url).catch(() => undefined);
    await stopChild(vellum.child);
    results.memory = {
      atEnd: breakdown,
      peakRssMb: mb(vellum.child.memory.peakProcess),
      note: 'VmHWM of the server process (polled VmRSS as a floor), whole run incl. seeding',
      peakAfter: peaks,
    };
    log(`server peak RSS ${mb(vellum.child.memory.peakProcess)} MB`);

    if (settings.workers > 1) {
      const clustered = await startVellum(database.url, settings.workers, `w${settings.workers}`);
      const tokenN = await createApi(clustered.url).login('bench_reader');
      const request: LoadRequest = {
        method: 'GET',
        path: `/api/notes/${seeded.noteId}`,
        headers: { authorization: `Bearer ${tokenN}` },
      };
      await warmUp(clustered.url, { readerToken: tokenN, noteId: seeded.noteId });
      const many = await measure(clustered.url, request, clustered.child);
      await stopChild(clustered.child);
      const one = scenarios.find((s) => s.id === 'note-get');
      results.workers = {
        workers: settings.workers,
        scenario: 'GET /api/notes/{id}',
        one:
          one === undefined
            ? null
            : { requestsPerSec: one.requestsPerSec, latencyP50Ms: one.latencyP50Ms, latencyP99Ms: one.latencyP99Ms },
        many: {
          requestsPerSec: many.requestsPerSec,
          latencyP50Ms: many.latencyP50Ms,
          latencyP99Ms: many.latencyP99Ms,
          non2xx: many.non2xx,
        },
        speedup: one === undefined ? null : round(many.requestsPerSec / one.requestsPerSec, 2),
        peakRssMbPerProcess: [...clustered.child.memory.peaks.values()].map(mb),
        peakRssMbTotal: mb(clustered.child.memory.peakTotal),
      };
      log(
        `WORKERS=${settings.workers}: ${many.requestsPerSec} req/s, p99 ${many.latencyP99Ms} ms (1 worker: ${one?.requestsPerSec ?? '?'} req/s)`,
      );
    }
    await stopChild(baseline.child);
  } finally {
    await stopAll();
    await database.drop().catch((error: unknown) => log(`could not drop the benchmark database: ${String(error)}`));
  }

  const report = {
    db: dbKind,
    database: database.describe,
    date: new Date().toISOString(),
    label: args.label ?? null,
    command,
    commit: gitCommit(),
    node: process.version,
    machine: {
      cores: os.availableParallelism(),
      cpu: os.cpus()[0]?.model ?? 'unknown',
      memoryGiB: round(os.totalmem() / 1024 ** 3, 1),
      platform: `${os.type()} ${os.release()}`,
      note: 'autocannon (this runner), the server and the baseline server all share these cores',
    },
    settings: { ...settings, pageSize: PAGE, noteContentBytes: NOTE_CONTENT.length, serverLogLevel: settings.logLevel },
    ...results,
    targets: evaluateTargets(results),
    wallSeconds: Math.round((Date.now() - started) / 1000),
  };
  for (const t of report.targets) log(`target ${t.met ? 'MET   ' : 'MISSED'} ${t.name}: ${t.value} (${t.goal})`);

  if (write) {
    const day = report.date.slice(0, 10);
    const tag = args.tag === undefined ? '' : `-${args.tag.replace(/[^A-Za-z0-9._-]/g, '_')}`;
    const out = path.join(ROOT, 'bench/results', `${dbKind}-${day}${tag}.json`);
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
    if (tag === '') {
      updateBenchmarksMd(path.join(ROOT, 'BENCHMARKS.md'), dbKind, renderMarkdown(report, path.relative(ROOT, out)));
      log(`wrote ${path.relative(ROOT, out)} and the ${dbKind} section of BENCHMARKS.md`);
    } else {
      log(`wrote ${path.relative(ROOT, out)}`);
    }
  } else {
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  }
  runScriptBenches(report.date.slice(0, 10));
  log(`done in ${report.wallSeconds} s`);
}

export interface Target {
  name: string;
  goal: string;
  value: string;
  met: boolean;
}

function evaluateTargets(results: Record<string, unknown>): Target[] {
  const targets: Target[] = [];
  const scenarios = (results.scenarios ?? []) as Measured[];
  const byId = (id: string) => scenarios.find((s) => s.id === id);
  const pct = (r: number) => `${(r * 100).toFixed(1)}%`;
  const note = byId('note-get');
  // Issue #10's bars: GET note >= 40% of the baseline on SQLite (goal 60%), >= 20% on PostgreSQL
  // (goal 30%); POST versions >= 20% on SQLite (goal 30%), informative on PostgreSQL.
  if (note?.ratio !== undefined) {
    const [bar, goal] = dbKind === 'sqlite' ? [0.4, '60%'] : [0.2, '30%'];
    targets.push({
      name: 'GET /api/notes/{id} vs baseline req/s',
      goal: `>= ${pct(bar)} (goal ${goal})`,
      value: pct(note.ratio),
      met: note.ratio >= bar,
    });
  }
  const post = byId('version-post');
  if (post?.ratio !== undefined) {
    targets.push({
      name: 'POST /api/notes/{id}/versions vs baseline req/s',
      goal: dbKind === 'sqlite' ? '>= 20.0% (goal 30%)' : '>= 20.0% (set for SQLite; informative here)',
      value: pct(post.ratio),
      met: post.ratio >= 0.2,
    });
  }
  const first = byId('versions-first');
  const deep = byId('versions-deepest');
  if (first !== undefined && deep !== undefined) {
    const r50 = deep.latencyP50Ms / Math.max(first.latencyP50Ms, 0.001);
    const r99 = deep.latencyP99Ms / Math.max(first.latencyP99Ms, 0.001);
    targets.push({
      name: 'deepest history page vs first page latency',
      goal: '<= 1.5x (p50 and p99)',
      value: `p50 ${r50.toFixed(2)}x, p99 ${r99.toFixed(2)}x`,
      met: r50 <= 1.5 && r99 <= 1.5,
    });
  }
  const storm = results.loginStorm as { p99Ratio: number } | undefined;
  if (storm !== undefined) {
    targets.push({
      name: 'GET note p99 under login storm (flood) vs without',
      goal: '< 3x',
      value: `${storm.p99Ratio}x`,
      met: storm.p99Ratio < 3,
    });
  }
  const paced = results.loginStormPaced as { p99Ratio: number; login: { rate: number } } | undefined;
  if (paced !== undefined) {
    targets.push({
      name: `GET note p99 under login storm (paced, ${paced.login.rate}/s) vs without`,
      goal: '< 3x',
      value: `${paced.p99Ratio}x`,
      met: paced.p99Ratio < 3,
    });
  }
  const memory = results.memory as { peakRssMb: number } | undefined;
  if (memory !== undefined) {
    targets.push({
      name: 'server peak RSS',
      goal: '< 200 MB',
      value: `${memory.peakRssMb} MB`,
      met: memory.peakRssMb < 200,
    });
  }
  return targets;
}

/** History (diff, GET note while diffing 1 MiB, pruned history pages) and search at scale. */
function runScriptBenches(day: string): void {
  for (const bench of SCRIPT_BENCHES) {
    if (!selected.has(bench.id)) continue;
    log(`${bench.id}: ${bench.script} --db ${dbKind}`);
    // search.ts writes its own results file unless told not to; the others print only.
    const extra = write ? bench.args.filter((a) => a !== '--no-write') : bench.args;
    const child = spawnSync(process.execPath, ['--import', 'tsx', bench.script, '--db', dbKind, ...extra], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 64 * 1024 * 1024,
    });
    process.stdout.write(child.stdout);
    if (child.status !== 0) throw new Error(`${bench.script} failed (exit ${child.status})`);
    if (write) fs.writeFileSync(path.join(ROOT, 'bench/results', `${bench.id}-${dbKind}-${day}.txt`), child.stdout);
  }
}

// Bounded in time whatever happens: children die with us, and the run itself has a ceiling.
const ceiling = setTimeout(() => {
  log(`run exceeded ${MAX_RUN_SECONDS} s; stopping`);
  void stopAll().finally(() => process.exit(1));
}, MAX_RUN_SECONDS * 1000);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping child processes`);
    void stopAll().finally(() => process.exit(130));
  });
}

try {
  await main();
  fs.rmSync(tmp, { recursive: true, force: true });
} catch (error) {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.stderr.write(`server logs kept in ${tmp}\n`);
  process.exitCode = 1;
} finally {
  clearTimeout(ceiling);
  await stopAll();
}
