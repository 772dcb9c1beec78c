// History benchmarks (issue #11): `npm run bench:history -- [--db sqlite|postgres] [--duration S]`.
//
// 1. GET /api/notes/{id}/diff of two 1 KiB versions, req/s and p99, against the bare Fastify
//    baseline serving a body of the same size.
// 2. GET /api/notes/{id} p99 alone, then while a client of its own (a separate autocannon process,
//    one connection) diffs two unrelated 1 MiB versions in a loop: the ratio must stay under 3.
// 3. The history pages of a note with 10,000 versions spread one a minute over a week, pruned by
//    `vellum prune-history` with HISTORY_RETENTION=all=2d,hourly=forever (every version of the last
//    two days, then one an hour): the first page against the deepest page, whose numbers have gaps,
//    measured in alternating rounds; the ratio must stay within 1.5x.
// It builds, starts `npm start`'s script on a fresh SQLite file (or PostgreSQL database from
// BENCH_DATABASE_URL), and stops everything it started.
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { mergeRuns, round, runLoad, withoutSamples, type LoadRequest } from './lib/load.js';
import { freePort, startChild, stopAll, waitForHttp } from './lib/processes.js';
import { createApi, prose } from './lib/seed.js';
import { scratchDatabase } from './lib/scratch.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    duration: { type: 'string', default: '6' },
    history: { type: 'string', default: '10000' },
    connections: { type: 'string', default: '10' },
    'no-build': { type: 'boolean', default: false },
  },
});
const duration = Number(args.duration);
const connections = Number(args.connections);
const historySize = Number(args.history);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-bench-history-'));
const log = (m: string) => process.stdout.write(`[bench:history] ${m}\n`);

async function database(): Promise<{ url: string; drop: () => Promise<void> }> {
  if (args.db === 'sqlite') return { url: `sqlite:${path.join(tmp, 'vellum.db')}`, drop: async () => {} };
  return scratchDatabase('postgres', 'history');
}

async function main() {
  if (!args['no-build']) spawnSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const db = await database();
  const start = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } })
    .scripts.start;
  const port = await freePort();
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: db.url,
    RATE_LIMIT: 'off',
    PWNED_PASSWORDS_URL: 'off',
    LOG_LEVEL: 'warn',
    JWT_SECRET: randomBytes(32).toString('base64url'),
    CSRF_SECRET: randomBytes(32).toString('base64url'),
  };
  const server = startChild('vellum', ['sh', '-c', start], {
    cwd: ROOT,
    logFile: path.join(tmp, 'vellum.log'),
    maxSeconds: 15 * 60,
    env,
  });
  const url = `http://127.0.0.1:${port}`;
  const basePort = await freePort();
  const baseline = startChild('baseline', ['node', '--import', 'tsx', 'bench/baseline-server.ts'], {
    cwd: ROOT,
    logFile: path.join(tmp, 'baseline.log'),
    maxSeconds: 15 * 60,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      PORT: String(basePort),
      BASELINE_MAX_SECONDS: '900',
    },
  });
  const baseUrl = `http://127.0.0.1:${basePort}`;
  try {
    await waitForHttp(`${url}/readyz`, server, 60_000);
    await waitForHttp(`${baseUrl}/bytes/1`, baseline, 60_000);
    const api = createApi(url);
    await api.signup('bench_history');
    const token = await api.login('bench_history');
    const auth = { authorization: `Bearer ${token}` };

    // Two 1 KiB versions that differ in a few words.
    const small = await api.createNote(token, 'Small', prose(1024, 1));
    await api.addVersion(token, small, 'Small', prose(1024, 1).replace(/the/g, 'THE'));
    // Two unrelated 1 MiB versions of short lines (the most lines per byte a note has in practice).
    let a = '';
    let b = '';
    for (let i = 0; a.length < 1024 * 1024 - 32; i += 1) a += `${i} alpha ${i % 13}\n`;
    for (let i = 0; b.length < 1024 * 1024 - 32; i += 1) b += `${i % 89} beta\n\n`;
    const large = await api.createNote(token, 'Large', a);
    await api.addVersion(token, large, 'Large', b);
    const reader = await api.createNote(token, 'Read me', prose(1024, 2));

    const diffSmall: LoadRequest = { method: 'GET', path: `/api/notes/${small}/diff`, headers: auth };
    const sizeSmall = Buffer.byteLength((await api.expect(200, 'GET', diffSmall.path, { token })).text);
    const t0 = performance.now();
    const largeBody = await api.expect(200, 'GET', `/api/notes/${large}/diff`, { token });
    const largeMs = round(performance.now() - t0, 1);
    log(
      `one 1 MiB unrelated diff: ${largeMs} ms, ${Buffer.byteLength(largeBody.text)} bytes, complete=${(largeBody.body as { complete: boolean }).complete}`,
    );

    await runLoad(url, diffSmall, { connections, duration: 2 });
    const vellum = withoutSamples(await runLoad(url, diffSmall, { connections, duration }));
    const bare = withoutSamples(
      await runLoad(baseUrl, { method: 'GET', path: `/bytes/${sizeSmall}`, headers: auth }, { connections, duration }),
    );
    log(
      `diff 1 KiB: ${vellum.requestsPerSec} req/s (p99 ${vellum.latencyP99Ms} ms) vs bare ${bare.requestsPerSec} req/s: ${round(vellum.requestsPerSec / bare.requestsPerSec, 3)}`,
    );

    const note: LoadRequest = { method: 'GET', path: `/api/notes/${reader}`, headers: auth };
    await runLoad(url, note, { connections, duration: 2 });
    const half = Math.max(1, Math.round(duration / 2));
    const before = await runLoad(url, note, { connections, duration: half });
    const loopSeconds = duration + 3;
    const looper = startChild(
      'diff loop',
      [
        'node',
        path.join(ROOT, 'node_modules/autocannon/autocannon.js'),
        '--json',
        '-c',
        '1',
        '-d',
        String(loopSeconds),
        '-H',
        `authorization=Bearer ${token}`,
        `${url}/api/notes/${large}/diff`,
      ],
      {
        cwd: ROOT,
        logFile: path.join(tmp, 'loop.json'),
        maxSeconds: loopSeconds + 60,
        env: { PATH: process.env.PATH, HOME: process.env.HOME },
      },
    );
    const loopDone = new Promise<void>((resolve) => looper.proc.once('exit', () => resolve()));
    await new Promise((r) => setTimeout(r, 1500));
    const during = withoutSamples(await runLoad(url, note, { connections, duration }));
    await loopDone;
    const loopText = fs.readFileSync(looper.logFile, 'utf8');
    const loop = JSON.parse(loopText.slice(loopText.indexOf('{'))) as {
      requests: { total: number };
      latency: { p50: number; p99: number };
      non2xx: number;
    };
    const after = await runLoad(url, note, { connections, duration: half });
    const alone = withoutSamples(mergeRuns([before, after]));
    log(`GET note alone: p99 ${alone.latencyP99Ms} ms (${alone.requestsPerSec} req/s)`);
    log(
      `GET note while diffing 1 MiB in a loop: p99 ${during.latencyP99Ms} ms (${during.requestsPerSec} req/s); ratio ${round(during.latencyP99Ms / alone.latencyP99Ms, 2)}`,
    );
    log(
      `the loop: ${loop.requests.total} diffs, p50 ${loop.latency.p50} ms, p99 ${loop.latency.p99} ms, non-2xx ${loop.non2xx}`,
    );

    await prunedHistoryPages(url, token, db.url, env);
    log(
      `load average during the run: ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} on ${os.cpus().length} cores`,
    );
  } finally {
    await stopAll();
    await db.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

const MINUTE = 60_000;
const PAGE = 50;

/** Scenario 3: see the header. */
async function prunedHistoryPages(
  url: string,
  token: string,
  databaseUrl: string,
  env: Record<string, string | undefined>,
) {
  const api = createApi(url);
  const auth = { authorization: `Bearer ${token}` };
  const noteId = await api.createNote(token, 'Pruned history', prose(256));
  const writes = await runLoad(
    url,
    {
      method: 'POST',
      path: `/api/notes/${noteId}/versions`,
      headers: auth,
      body: JSON.stringify({ title: 'Pruned history', content: prose(256) }),
    },
    { connections: 16, duration: 0, amount: historySize - 1 },
  );
  if ((writes.statusCodes['204'] ?? 0) !== historySize - 1)
    throw new Error(`seeding history: ${JSON.stringify(writes.statusCodes)}`);
  // Written within seconds; spread them one a minute, the newest now, so that the tiers apply.
  await backdate(databaseUrl, noteId, Date.now());
  const pruned = spawnSync('node', ['dist/cli.js', 'prune-history'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...env, HISTORY_RETENTION: 'all=2d,hourly=forever' },
  });
  if (pruned.status !== 0) throw new Error(`prune-history failed: ${pruned.stderr}`);
  log(`prune-history: ${pruned.stdout.trim().split('\n').at(-1)}`);

  let kept = 0;
  for (let offset = 0; ; offset += 100) {
    const page = (await api.expect(200, 'GET', `/api/notes/${noteId}/versions?limit=100&offset=${offset}`, { token }))
      .body as unknown[];
    kept += page.length;
    if (page.length < 100) break;
  }
  const deepest = Math.max(0, kept - PAGE);
  const first: LoadRequest = {
    method: 'GET',
    path: `/api/notes/${noteId}/versions?limit=${PAGE}&offset=0`,
    headers: auth,
  };
  const deep: LoadRequest = {
    method: 'GET',
    path: `/api/notes/${noteId}/versions?limit=${PAGE}&offset=${deepest}`,
    headers: auth,
  };
  await runLoad(url, first, { connections, duration: 2 });
  await runLoad(url, deep, { connections, duration: 2 });
  // Alternating rounds, so that load from elsewhere on the machine hits both alike.
  const rounds = 3;
  const slice = Math.max(1, Math.round(duration / rounds));
  const firstRuns = [];
  const deepRuns = [];
  for (let r = 0; r < rounds; r++) {
    firstRuns.push(await runLoad(url, first, { connections, duration: slice }));
    deepRuns.push(await runLoad(url, deep, { connections, duration: slice }));
  }
  const a = withoutSamples(mergeRuns(firstRuns));
  const b = withoutSamples(mergeRuns(deepRuns));
  log(
    `pruned history: ${kept} of ${historySize} versions kept; page of ${PAGE} at offset 0: p50 ${a.latencyP50Ms} ms, p99 ${a.latencyP99Ms} ms, ${a.requestsPerSec} req/s; at offset ${deepest}: p50 ${b.latencyP50Ms} ms, p99 ${b.latencyP99Ms} ms, ${b.requestsPerSec} req/s; deepest/first p50 ${round(b.latencyP50Ms / a.latencyP50Ms, 2)}x, p99 ${round(b.latencyP99Ms / a.latencyP99Ms, 2)}x (target <= 1.5x)`,
  );
}

/** Version v of N gets created_at = newest - (N - v) minutes (straight in the database: test data only). */
async function backdate(databaseUrl: string, noteId: string, newest: number) {
  const top = historySize;
  if (databaseUrl.startsWith('sqlite:')) {
    const { default: Sqlite } = await import('better-sqlite3');
    const sqlite = new Sqlite(databaseUrl.slice('sqlite:'.length));
    sqlite.pragma('busy_timeout = 5000');
    const update = sqlite.prepare('update note_versions set created_at = ? where note_id = ? and version = ?');
    sqlite.transaction(() => {
      for (let v = 1; v <= top; v++) update.run(new Date(newest - (top - v) * MINUTE).toISOString(), noteId, v);
    })();
    sqlite.close();
    return;
  }
  const client = new pg.Client(databaseUrl);
  await client.connect();
  await client.query(
    `update note_versions set created_at = to_timestamp($2::double precision / 1000) - make_interval(mins => $3::int - version)
     where note_id = $1`,
    [noteId, newest, top],
  );
  await client.end();
}

await main();
