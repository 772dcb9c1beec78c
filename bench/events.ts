// Live events and share reads: `npm run bench:events -- [--db sqlite|postgres]` (also `npm run bench -- --only events`).
// See BENCHMARKS.md, "Live events and share reads".
//
// The service runs as its own process (src/main.ts), so its RSS and CPU (/proc/<pid>) are its own;
// this process is the clients. 1,000 event streams are opened (50 users × 20, the per-user cap):
// RSS per stream is the server's growth over those streams. One note is shared with 99 of those
// users; with one stream each of them and its owner (100 streams), the owner saves SAVES times and
// each delivery's latency is the time from sending the save to the event's arrival on a stream.
// Then GET /api/shared/{token} (no credentials) against GET /api/notes/{id}, interleaved.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { keepResult } from './lib/in-process.js';
import { cpuMs, rssMiB } from './lib/processes.js';
import { percentiles, scratchDatabase } from './lib/scratch.js';
import { startProcess } from '../test/helpers/server-process.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: process.env.BENCH_DATABASE_URL ? 'postgres' : 'sqlite' },
    saves: { type: 'string', default: '50' },
    reads: { type: 'string', default: '500' },
    'no-write': { type: 'boolean', default: false },
  },
});
const kind = args.db === 'postgres' ? 'postgres' : 'sqlite';
const SAVES = Number(args.saves);
const READS = Number(args.reads);
const USERS = 50;
const PER_USER = 20;
const AUDIENCE = 100;
const log = (message: string) =>
  process.stdout.write(`[events bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

/** An open stream that calls `onEvent` with each event's type and data. */
function openStream(
  base: string,
  token: string,
  onEvent: (type: string, data: { id: string; version?: number }) => void,
): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      `${base}/api/events`,
      { headers: { authorization: `Bearer ${token}` }, agent: false },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream: ${res.statusCode}`));
        res.setEncoding('utf8');
        let buffer = '';
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            if (block.includes(': connected')) resolve(request);
            const type = /^event: (.+)$/m.exec(block)?.[1];
            const data = /^data: (.+)$/m.exec(block)?.[1];
            if (type !== undefined && data !== undefined) onEvent(type, JSON.parse(data));
          }
        });
      },
    );
    request.on('error', reject);
  });
}

async function main() {
  const scratch = await scratchDatabase(kind, 'events');
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-events-bench-'));
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
      MALLOC_MMAP_THRESHOLD_: '1048576',
      TEST_ARGON2: 'cheap',
      NODE_ENV: 'test',
    },
  });
  const streams: http.ClientRequest[] = [];
  const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  log(`${kind}, load average ${load}`);
  try {
    const pid = server.child.pid!;
    const base = `http://127.0.0.1:${await server.port(60_000)}`;
    const json = { 'content-type': 'application/json' };
    const call = async (method: string, url: string, token?: string, body?: unknown) => {
      const res = await fetch(`${base}${url}`, {
        method,
        headers: { ...json, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text}`);
      return text === '' ? undefined : JSON.parse(text);
    };
    const users: Array<{ username: string; token: string }> = [];
    for (let i = 0; i < AUDIENCE + USERS; i++) {
      const user = {
        username: `ev${i}${randomBytes(3).toString('hex')}`,
        password: 'violet-Harbor-lantern-42-quietly',
      };
      await call('POST', '/api/auth/signup', undefined, user);
      users.push({
        username: user.username,
        token: ((await call('POST', '/api/auth/login', undefined, user)) as { access_token: string }).access_token,
      });
    }
    const [owner, ...rest] = users;
    const note = (await call('POST', '/api/notes', owner!.token, { title: 'Shared', content: 'x'.repeat(1000) })) as {
      id: string;
    };
    for (const member of rest.slice(0, AUDIENCE - 1))
      await call('POST', `/api/notes/${note.id}/members`, owner!.token, { username: member.username, role: 'viewer' });
    const share = (await call('POST', `/api/notes/${note.id}/shares`, owner!.token, {})) as { token: string };
    log(`${users.length} users, a note shared with ${AUDIENCE - 1} of them`);

    const idle = rssMiB(pid);
    // The audience: one stream each; arrivals of note.updated by version.
    const arrivals = new Map<number, number[]>();
    for (const user of users.slice(0, AUDIENCE)) {
      streams.push(
        await openStream(base, user.token, (type, data) => {
          if (type !== 'note.updated' || data.id !== note.id || data.version === undefined) return;
          arrivals.set(data.version, [...(arrivals.get(data.version) ?? []), performance.now()]);
        }),
      );
    }
    // The rest up to 1,000: idle streams of other users, 20 each.
    for (const user of users.slice(AUDIENCE)) {
      for (let i = 0; i < PER_USER && streams.length < 1000; i++)
        streams.push(await openStream(base, user.token, () => undefined));
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const withStreams = rssMiB(pid);
    log(`${streams.length} streams: server RSS ${idle.toFixed(1)} → ${withStreams.toFixed(1)} MiB`);

    const latencies: number[] = [];
    const saveMs: number[] = [];
    const cpuBefore = cpuMs(pid);
    for (let i = 0; i < SAVES; i++) {
      const sent = performance.now();
      await call('POST', `/api/notes/${note.id}/versions`, owner!.token, { title: 'Shared', content: `save ${i}` });
      saveMs.push(performance.now() - sent);
      const version = i + 2;
      const deadline = Date.now() + 10_000;
      while ((arrivals.get(version)?.length ?? 0) < AUDIENCE && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 1));
      const got = arrivals.get(version) ?? [];
      if (got.length < AUDIENCE) throw new Error(`version ${version}: ${got.length} of ${AUDIENCE} streams heard it`);
      for (const at of got) latencies.push(at - sent);
    }
    const saveCpu = (cpuMs(pid) - cpuBefore) / SAVES;
    const fanout = percentiles(latencies);
    log(
      `fan-out to ${AUDIENCE} streams: p50 ${fanout.p50} ms, p99 ${fanout.p99} ms (${latencies.length} deliveries); save p50 ${percentiles(saveMs).p50} ms; server CPU ${saveCpu.toFixed(2)} ms per save and its deliveries`,
    );
    for (const stream of streams) stream.destroy();
    streams.length = 0;

    const shared: number[] = [];
    const own: number[] = [];
    let sharedCpu = 0;
    let ownCpu = 0;
    for (let i = 0; i < READS + 20; i++) {
      for (const [list, url, token] of [
        [shared, `/api/shared/${share.token}`, undefined],
        [own, `/api/notes/${note.id}`, owner!.token],
      ] as const) {
        const cpu = cpuMs(pid);
        const t = performance.now();
        await call('GET', url, token);
        const ms = performance.now() - t;
        if (i < 20) continue;
        list.push(ms);
        if (list === shared) sharedCpu += cpuMs(pid) - cpu;
        else ownCpu += cpuMs(pid) - cpu;
      }
    }
    const sharedP = percentiles(shared);
    const ownP = percentiles(own);
    log(
      `GET /api/shared/{token} p50 ${sharedP.p50} ms (p99 ${sharedP.p99}) vs GET /api/notes/{id} p50 ${ownP.p50} ms (p99 ${ownP.p99}): ` +
        `x${(sharedP.p50 / ownP.p50).toFixed(2)}; server CPU ${(sharedCpu / READS).toFixed(2)} vs ${(ownCpu / READS).toFixed(2)} ms`,
    );
    keepResult(
      'events',
      {
        db: kind,
        date: new Date().toISOString(),
        load_average: load,
        cpus: os.cpus().length,
        streams: 1000,
        rss_mib: {
          idle,
          with_streams: withStreams,
          per_stream_kib: Math.round((((withStreams - idle) * 1024) / 1000) * 10) / 10,
        },
        fanout: {
          audience: AUDIENCE,
          saves: SAVES,
          latency_ms: fanout,
          save_ms: percentiles(saveMs),
          server_cpu_ms_per_save: saveCpu,
        },
        share_read: {
          reads: READS,
          shared_ms: sharedP,
          note_ms: ownP,
          ratio_p50: sharedP.p50 / ownP.p50,
          server_cpu_ms: { shared: sharedCpu / READS, note: ownCpu / READS },
        },
      },
      !args['no-write'],
      log,
    );
  } finally {
    for (const stream of streams) stream.destroy();
    await server.kill();
    await scratch.drop();
    fs.rmSync(home, { recursive: true, force: true });
  }
}

await main();
