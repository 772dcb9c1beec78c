// Save latency as writers are added (issue #28): `npm run bench:writers -- [--db sqlite|postgres] [--rate R]`.
// See BENCHMARKS.md, "Issue #28".
//
// The service runs as its own process; this process is the writers (autocannon). Each writer saves
// a 1 KiB version RATE times a second (paced, so the load is what the writers ask for, not what
// the server can take): 1 writer, then 50 at once — on 50 notes (one each) and on one note. The
// figure is the p99 of a save with 50 writers against the p99 with one (target < 3×). Then the
// peak: 50 unpaced writers on 50 notes, saves per second and server CPU per save.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { keepResult } from './lib/in-process.js';
import { mergeRuns, runLoad, withoutSamples, type RawLoadResult } from './lib/load.js';
import { cpuMs } from './lib/processes.js';
import { scratchDatabase } from './lib/scratch.js';
import { startProcess } from '../test/helpers/server-process.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: process.env.BENCH_DATABASE_URL ? 'postgres' : 'sqlite' },
    rate: { type: 'string', default: '10' },
    duration: { type: 'string', default: '8' },
    'no-write': { type: 'boolean', default: false },
  },
});
const kind = args.db === 'postgres' ? 'postgres' : 'sqlite';
const RATE = Number(args.rate);
const DURATION = Number(args.duration);
const WRITERS = 50;
const CONTENT = 'The quick brown fox jumps over the lazy dog. '.repeat(23);
const log = (message: string) =>
  process.stdout.write(`[writers bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

/** POSTs `body` as JSON and resolves with the status once the answer has been read. */
function post(
  agent: http.Agent,
  url: string,
  body: string,
  headers: Record<string, string> = authHeaders,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
let authHeaders: Record<string, string> = {};

async function main() {
  const scratch = await scratchDatabase(kind, 'writers');
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-writers-bench-'));
  const server = startProcess(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: path.resolve(import.meta.dirname, '..'),
    env: {
      DATABASE_URL: scratch.url,
      HOME: home,
      PORT: '0',
      HOST: '127.0.0.1',
      JWT_SECRET: randomBytes(32).toString('hex'),
      CSRF_SECRET: randomBytes(32).toString('hex'),
      PWNED_PASSWORDS_URL: 'off',
      RATE_LIMIT: 'off',
      LOG_LEVEL: 'info',
      SHUTDOWN_DRAIN_SECONDS: '0',
      TEST_ARGON2: 'cheap',
      NODE_ENV: 'test',
    },
  });
  const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  log(`${kind}, load average ${load}, ${RATE} saves/s per writer, ${DURATION} s per run`);
  try {
    const pid = server.child.pid!;
    const base = `http://127.0.0.1:${await server.port(60_000)}`;
    const json = { 'content-type': 'application/json' };
    const user = { username: 'writers', password: 'Vellum-bench: correct horse battery staple 42!' };
    await fetch(`${base}/api/auth/signup`, { method: 'POST', headers: json, body: JSON.stringify(user) });
    const { access_token: token } = (await (
      await fetch(`${base}/api/auth/login`, { method: 'POST', headers: json, body: JSON.stringify(user) })
    ).json()) as { access_token: string };
    const headers = { authorization: `Bearer ${token}` };
    authHeaders = headers;
    const notes: string[] = [];
    for (let i = 0; i < WRITERS; i++) {
      const res = await fetch(`${base}/api/notes`, {
        method: 'POST',
        headers: { ...json, ...headers },
        body: JSON.stringify({ title: `note ${i}`, content: CONTENT }),
      });
      notes.push(((await res.json()) as { id: string }).id);
    }
    const body = JSON.stringify({ title: 'a save', content: CONTENT });
    const save = (note: string) => ({ method: 'POST' as const, path: `/api/notes/${note}/versions`, headers, body });
    /**
     * One paced writer: a save every 1/RATE s on its own keep-alive connection, from `offset` ms on
     * (autocannon's connectionRate sends each second's requests back to back at the start of the
     * second, so 50 such writers arrive as bursts far above the rate asked for).
     */
    const pacedWriter = async (note: string, offset: number): Promise<RawLoadResult> => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const latencies: number[] = [];
      const statusCodes: Record<string, number> = {};
      const start = performance.now() + offset;
      const interval = 1000 / RATE;
      for (let k = 0; k < DURATION * RATE; k++) {
        const due = start + k * interval;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        const sent = performance.now();
        const status = await post(agent, `${base}/api/notes/${note}/versions`, body);
        statusCodes[status] = (statusCodes[status] ?? 0) + 1;
        if (status >= 200 && status < 300) latencies.push(performance.now() - sent);
      }
      agent.destroy();
      const total = DURATION * RATE;
      return {
        latencies,
        total,
        non2xx: total - latencies.length,
        errors: 0,
        timeouts: 0,
        statusCodes,
        durationSec: DURATION,
        requestsPerSec: RATE,
        latencyP50Ms: 0,
        latencyP99Ms: 0,
        latencyAvgMs: 0,
      };
    };
    /** `writers` writers, the i-th saving to notes[pick(i)], each paced at RATE (or unpaced, with autocannon). */
    const run = async (writers: number, pick: (i: number) => number, paced = true) => {
      const before = cpuMs(pid);
      const client = process.cpuUsage();
      // Paced writers start spread over one period, as independent writers would be.
      const runs: RawLoadResult[] = await Promise.all(
        Array.from({ length: writers }, (_, i) =>
          paced
            ? pacedWriter(notes[pick(i)]!, (i * 1000) / RATE / writers)
            : runLoad(base, save(notes[pick(i)]!), { connections: 1, duration: DURATION }),
        ),
      );
      const merged = mergeRuns(runs);
      const cpu = cpuMs(pid) - before;
      const used = process.cpuUsage(client);
      const clientCores = Math.round(((used.user + used.system) / 1e6 / DURATION) * 100) / 100;
      return {
        ...withoutSamples(merged),
        clientCores,
        serverCores: Math.round((cpu / 1000 / DURATION) * 100) / 100,
        requestsPerSec: Math.round(merged.total / DURATION),
        serverCpuMsPerSave: Math.round((cpu / merged.total) * 1000) / 1000,
      };
    };
    await run(WRITERS, (i) => i, false); // warm-up
    const one = await run(1, () => 0);
    log(
      `1 writer: p50 ${one.latencyP50Ms} ms, p99 ${one.latencyP99Ms} ms (cores: server ${one.serverCores}, writers ${one.clientCores})`,
    );
    const manyNotes = await run(WRITERS, (i) => i);
    log(
      `${WRITERS} writers, ${WRITERS} notes: p50 ${manyNotes.latencyP50Ms} ms, p99 ${manyNotes.latencyP99Ms} ms (cores: server ${manyNotes.serverCores}, writers ${manyNotes.clientCores})`,
    );
    const oneNote = await run(WRITERS, () => 1);
    log(
      `${WRITERS} writers, one note: p50 ${oneNote.latencyP50Ms} ms, p99 ${oneNote.latencyP99Ms} ms (cores: server ${oneNote.serverCores}, writers ${oneNote.clientCores})`,
    );
    const peak = await run(WRITERS, (i) => i, false);
    log(
      `${WRITERS} unpaced writers: ${peak.requestsPerSec} saves/s, p99 ${peak.latencyP99Ms} ms, server CPU ${peak.serverCpuMsPerSave} ms per save`,
    );
    const ratio = (r: { latencyP99Ms: number }) => Math.round((r.latencyP99Ms / one.latencyP99Ms) * 100) / 100;
    keepResult(
      'writers',
      {
        db: kind,
        date: new Date().toISOString(),
        load,
        ratePerWriter: RATE,
        durationSec: DURATION,
        oneWriter: one,
        fiftyWritersManyNotes: manyNotes,
        fiftyWritersOneNote: oneNote,
        fiftyUnpaced: peak,
        p99RatioManyNotes: ratio(manyNotes),
        p99RatioOneNote: ratio(oneNote),
      },
      !args['no-write'],
      log,
    );
    log(`p99 with ${WRITERS} writers vs 1: ${ratio(manyNotes)}× (50 notes), ${ratio(oneNote)}× (one note)`);
  } finally {
    await server.kill();
    await scratch.drop();
    fs.rmSync(home, { recursive: true, force: true });
  }
}

await main();
