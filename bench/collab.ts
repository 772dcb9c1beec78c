// Live co-editing: `npm run bench:collab`. The servers run as their own processes (`src/main.ts`,
// as the writers bench starts them), so their CPU (/proc/<pid>/stat) and memory are theirs alone;
// memory is read after a full collection, asked for through the server's inspector (started on a
// local port for the bench): V8's used heap and the RSS. The clients (@hocuspocus/provider over
// ws, as the web editor uses it) run in this process.
//
//   1. A keystroke's latency: one client's insert until another client's document has it, on one
//      instance, and across two instances sharing PostgreSQL and Redis (TEST_DATABASE_URL and
//      TEST_REDIS_URL set), with the servers' CPU per keystroke.
//   2. Memory and CPU per open document (DOCS notes, one client each) and per 100 editors on one
//      note (EDITORS accounts, each a member), and the fan-out of a keystroke to all of them.
//   3. Versions written per minute of typing (bursts and pauses, COLLAB_IDLE_SECONDS 5): at most
//      one per pause of 5 s or more, plus one when the last person leaves.
//   4. Keystroke latency in a 1 MB note in the browser with live editing off and on
//      (web/e2e/collab-bench.spec.ts, after a build; --no-browser skips it).
//
// The machine is shared: the load average is printed with each part, and CPU per operation is the
// figure to compare between runs, not wall time alone.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { startProcess, type ServerProcess } from '../test/helpers/server-process.js';
import { connect, type Client } from '../test/collab/support.js';
import { cpuMs, rssMiB } from './lib/processes.js';
import { scratchDatabase } from './lib/scratch.js';

const { values: args } = parseArgs({
  options: {
    keys: { type: 'string', default: '300' },
    docs: { type: 'string', default: '200' },
    editors: { type: 'string', default: '100' },
    'typing-seconds': { type: 'string', default: '60' },
    'no-browser': { type: 'boolean', default: false },
  },
});
const KEYS = Number(args.keys);
const DOCS = Number(args.docs);
const EDITORS = Number(args.editors);
const TYPING_SECONDS = Number(args['typing-seconds']);
const IDLE_SECONDS = 5;
/** The server's cap on live connections per account on an instance (src/collab/collab.ts). */
const PER_ACCOUNT = 20;
const ROOT = path.resolve(import.meta.dirname, '..');
const PASSWORD = 'Vellum-bench: correct horse battery staple 42!';

const log = (message: string) => process.stdout.write(`[collab bench] ${message}\n`);
const load = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const ms = (x: number) => x.toFixed(2);
const sleep = (t: number) => new Promise((resolve) => setTimeout(resolve, t));

interface Server {
  process: ServerProcess;
  pid: number;
  base: string;
  ws: string;
  inspector: Inspector;
  stop(): Promise<void>;
}

/** The server's inspector (Chrome DevTools protocol over a WebSocket). */
class Inspector {
  private next = 0;
  private readonly waiting = new Map<number, (result: unknown) => void>();
  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { id?: number; result?: unknown };
      if (message.id !== undefined) this.waiting.get(message.id)?.(message.result);
    });
  }
  static async open(url: string): Promise<Inspector> {
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    return new Inspector(socket);
  }
  call(method: string, params: object = {}): Promise<unknown> {
    this.next += 1;
    const id = this.next;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }
  close(): void {
    this.socket.close();
  }
}

async function startServer(databaseUrl: string, env: Record<string, string> = {}): Promise<Server> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-collab-bench-'));
  const server = startProcess(process.execPath, ['--inspect=127.0.0.1:0', '--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      DATABASE_URL: databaseUrl,
      HOME: home,
      PORT: '0',
      HOST: '127.0.0.1',
      JWT_SECRET: SECRETS.jwt,
      CSRF_SECRET: SECRETS.csrf,
      PWNED_PASSWORDS_URL: 'off',
      RATE_LIMIT: 'off',
      LOG_LEVEL: 'info',
      SHUTDOWN_DRAIN_SECONDS: '0',
      TEST_ARGON2: 'cheap',
      NODE_ENV: 'test',
      COLLAB_IDLE_SECONDS: String(IDLE_SECONDS),
      ...env,
    },
  });
  const port = await server.port(120_000);
  const inspectorUrl = await server.waitFor(
    (line) => /Debugger listening on (ws:\/\/\S+)/.exec(line)?.[1],
    10_000,
    "the inspector's address",
  );
  const inspector = await Inspector.open(inspectorUrl);
  return {
    process: server,
    pid: server.child.pid!,
    base: `http://127.0.0.1:${port}`,
    ws: `ws://127.0.0.1:${port}/api/collab`,
    inspector,
    async stop() {
      inspector.close();
      server.child.kill('SIGTERM');
      await Promise.race([server.exited, sleep(15_000).then(() => server.kill())]);
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}
// Every instance signs the same tokens (two instances behind one balancer).
const SECRETS = { jwt: randomBytes(32).toString('hex'), csrf: randomBytes(32).toString('hex') };

/** A server's memory after a full collection, in MiB: V8's used heap and the process's RSS. */
async function memory(server: Server): Promise<{ heap: number; rss: number }> {
  await server.inspector.call('HeapProfiler.collectGarbage');
  const answer = (await server.inspector.call('Runtime.evaluate', {
    expression: 'process.memoryUsage().heapUsed',
    returnByValue: true,
  })) as { result: { value: number } };
  return { heap: answer.result.value / 1024 / 1024, rss: rssMiB(server.pid) };
}

async function api(base: string, method: string, url: string, token: string | null, body?: unknown) {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: {
      ...(body !== undefined && { 'content-type': 'application/json' }),
      ...(token !== null && { authorization: `Bearer ${token}` }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return text === '' ? undefined : JSON.parse(text);
}

let accounts = 0;
async function account(base: string): Promise<{ username: string; token: string }> {
  accounts += 1;
  const username = `bench${accounts}${randomBytes(3).toString('hex')}`;
  await api(base, 'POST', '/api/auth/signup', null, { username, password: PASSWORD });
  const login = await api(base, 'POST', '/api/auth/login', null, { username, password: PASSWORD });
  return { username, token: login.access_token };
}

const note = async (base: string, token: string, content: string): Promise<string> =>
  (await api(base, 'POST', '/api/notes', token, { title: 'bench', content })).id;

/** Opens `clients`, each when the one before is in step (as people arrive), and waits for all. */
async function openAll(make: () => Client[]): Promise<Client[]> {
  const clients = make();
  const ok = await Promise.all(clients.map((c) => c.ready));
  if (!ok.every(Boolean)) throw new Error(`${ok.filter((x) => !x).length} clients refused`);
  return clients;
}

/** When `client`'s content reaches `length` characters (performance.now()). */
function arrival(client: Client, length: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('a keystroke did not arrive in 30 s')), 30_000);
    const check = () => {
      if (client.content.length < length) return;
      const at = performance.now();
      clearTimeout(timer);
      client.content.unobserve(check);
      resolve(at);
    };
    client.content.observe(check);
  });
}

/** One client types KEYS characters, each when the last has reached every other client. */
async function keystrokes(
  typist: Client,
  others: Client[],
  keys: number,
  servers: Server[],
): Promise<{ times: number[]; cpuPerKey: number }> {
  const times: number[] = [];
  const cpu0 = servers.reduce((sum, s) => sum + cpuMs(s.pid), 0);
  for (let i = 0; i < keys; i += 1) {
    const length = typist.content.length + 1;
    // Timed by the documents' own observers (no polling between the arrival and the clock).
    const arrived = Promise.all(others.map((o) => arrival(o, length)));
    const start = performance.now();
    typist.content.insert(typist.content.length, 'x');
    times.push((await arrived).reduce((latest, t) => Math.max(latest, t), 0) - start);
  }
  const cpu = servers.reduce((sum, s) => sum + cpuMs(s.pid), 0) - cpu0;
  return { times, cpuPerKey: cpu / keys };
}

async function settle(server: Server, quietMs = 1500): Promise<void> {
  // Until the server's CPU stops moving for a moment (loading and storing done).
  let last = cpuMs(server.pid);
  for (let i = 0; i < 40; i += 1) {
    await sleep(quietMs);
    const now = cpuMs(server.pid);
    if (now - last <= 10) return;
    last = now;
  }
}

async function oneInstance(kind: string, url: string): Promise<void> {
  const server = await startServer(url);
  try {
    log(`one instance (${kind}), load average ${load()}`);
    const owner = await account(server.base);
    const id = await note(server.base, owner.token, '');
    const [a, b] = await openAll(() => [connect(server.ws, id, owner.token), connect(server.ws, id, owner.token)]);
    await keystrokes(a!, [b!], 20, [server]); // warm-up
    const { times, cpuPerKey } = await keystrokes(a!, [b!], KEYS, [server]);
    log(
      `  keystroke to another client, one instance (${kind}): ${KEYS} keys, p50 ${ms(pct(times, 50))} ms, p95 ${ms(pct(times, 95))} ms; server CPU ${ms(cpuPerKey)} ms per keystroke; load ${load()}`,
    );
    a!.destroy();
    b!.destroy();

    // Open documents: DOCS notes of about 1 KiB, one client each, PER_ACCOUNT per account.
    const owners = await Promise.all(Array.from({ length: Math.ceil(DOCS / PER_ACCOUNT) }, () => account(server.base)));
    const ids: { id: string; token: string }[] = [];
    for (let i = 0; i < DOCS; i += 1) {
      const who = owners[Math.floor(i / PER_ACCOUNT)]!;
      ids.push({ id: await note(server.base, who.token, 'lorem ipsum dolor sit amet\n'.repeat(40)), token: who.token });
    }
    await settle(server);
    const { rss: rss0, heap: heap0 } = await memory(server);
    const cpu0 = cpuMs(server.pid);
    const docs = await openAll(() => ids.map(({ id: n, token }) => connect(server.ws, n, token)));
    const cpuOpen = cpuMs(server.pid) - cpu0;
    await settle(server);
    const { rss: rss1, heap: heap1 } = await memory(server);
    const idle0 = cpuMs(server.pid);
    await sleep(20_000);
    const idle = cpuMs(server.pid) - idle0;
    log(
      `  ${DOCS} open documents (1 KiB, one client each): RSS +${(((rss1 - rss0) * 1024) / DOCS).toFixed(1)} KiB, heap +${(((heap1 - heap0) * 1024) / DOCS).toFixed(1)} KiB per document (RSS ${rss0.toFixed(0)} → ${rss1.toFixed(0)} MiB, heap ${heap0.toFixed(0)} → ${heap1.toFixed(0)} MiB); opening ${ms(cpuOpen / DOCS)} ms CPU per document; idle ${ms(idle / 20 / DOCS)} ms CPU per document per second; load ${load()}`,
    );
    for (const d of docs) d.destroy();
    await settle(server);

    // EDITORS people on one note, each with their own account (the cap is per account).
    // One after another: sign-ups at once are shed (503 busy) on a loaded machine.
    const people = [owner];
    while (people.length < EDITORS) people.push(await account(server.base));
    const shared = await note(server.base, owner.token, 'shared\n'.repeat(40));
    for (const p of people.slice(1))
      await api(server.base, 'POST', `/api/notes/${shared}/members`, owner.token, {
        username: p.username,
        role: 'editor',
      });
    await settle(server);
    const { rss: rss2, heap: heap2 } = await memory(server);
    const cpu2 = cpuMs(server.pid);
    const editors = await openAll(() => people.map((p) => connect(server.ws, shared, p.token)));
    const cpuJoin = cpuMs(server.pid) - cpu2;
    // Everyone shows a cursor, as in the editor.
    for (const e of editors) e.provider.setAwarenessField('user', { name: 'x' });
    await settle(server);
    const { rss: rss3, heap: heap3 } = await memory(server);
    const fan = await keystrokes(editors[0]!, editors.slice(1), 50, [server]);
    const idle2 = cpuMs(server.pid);
    await sleep(20_000);
    const idleEditors = cpuMs(server.pid) - idle2;
    log(
      `  ${EDITORS} editors on one note: RSS +${(rss3 - rss2).toFixed(1)} MiB, heap +${(heap3 - heap2).toFixed(1)} MiB for all of them; joining ${ms(cpuJoin)} ms CPU in all; a keystroke to all ${EDITORS - 1} others p50 ${ms(pct(fan.times, 50))} ms, p95 ${ms(pct(fan.times, 95))} ms, server CPU ${ms(fan.cpuPerKey)} ms per keystroke; idle ${ms(idleEditors / 20)} ms CPU per second for all (awareness renewals); load ${load()}`,
    );
    for (const e of editors) e.destroy();

    await versionsPerMinute(server, owner.token);
  } finally {
    await server.stop();
  }
}

/**
 * One person types for TYPING_SECONDS as people do: bursts of 5–40 keys 80–250 ms apart, pauses
 * of 0.5–3 s between bursts, and now and then (one in six) a pause of 6–10 s, longer than
 * COLLAB_IDLE_SECONDS. Seeded, so every run types alike.
 */
async function versionsPerMinute(server: Server, token: string): Promise<void> {
  let seed = 42;
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const id = await note(server.base, token, 'typing\n');
  const [typist] = await openAll(() => [connect(server.ws, id, token)]);
  const countVersions = async () =>
    ((await api(server.base, 'GET', `/api/notes/${id}/versions`, token)) as unknown[]).length;
  const before = await countVersions();
  const end = performance.now() + TYPING_SECONDS * 1000;
  let keys = 0;
  let longPauses = 0;
  while (performance.now() < end) {
    const burst = 5 + Math.floor(random() * 36);
    for (let k = 0; k < burst; k += 1) {
      typist!.content.insert(typist!.content.length, k === burst - 1 ? ' ' : 'w');
      keys += 1;
      await sleep(80 + random() * 170);
    }
    const long = random() < 1 / 6;
    if (long) longPauses += 1;
    await sleep(long ? 6000 + random() * 4000 : 500 + random() * 2500);
  }
  const whileTyping = (await countVersions()) - before;
  typist!.destroy();
  const started = Date.now();
  let after = whileTyping;
  while (Date.now() - started < 20_000) {
    after = (await countVersions()) - before;
    if (after > whileTyping) break;
    await sleep(200);
  }
  log(
    `  versions while typing ${TYPING_SECONDS} s (${keys} keys, ${longPauses} pauses of 6–10 s, COLLAB_IDLE_SECONDS ${IDLE_SECONDS}): ${whileTyping} written (${(whileTyping / (TYPING_SECONDS / 60)).toFixed(1)} per minute; at most one per pause of ${IDLE_SECONDS} s or more, so ≤ ${longPauses}${whileTyping <= longPauses ? ', met' : ', EXCEEDED'}), and ${after - whileTyping} when the typist left; load ${load()}`,
  );
}

async function twoInstances(url: string, redis: string): Promise<void> {
  const env = { REDIS_URL: redis, REDIS_KEY_PREFIX: `bench${Date.now()}:` };
  const one = await startServer(url, env);
  const two = await startServer(url, env);
  try {
    log(`two instances (PostgreSQL + Redis), load average ${load()}`);
    const owner = await account(one.base);
    const id = await note(one.base, owner.token, '');
    const [a, b] = await openAll(() => [connect(one.ws, id, owner.token), connect(two.ws, id, owner.token)]);
    await keystrokes(a!, [b!], 20, [one, two]);
    const { times, cpuPerKey } = await keystrokes(a!, [b!], KEYS, [one, two]);
    log(
      `  keystroke to another client across two instances: ${KEYS} keys, p50 ${ms(pct(times, 50))} ms, p95 ${ms(pct(times, 95))} ms; both servers' CPU ${ms(cpuPerKey)} ms per keystroke; load ${load()}`,
    );
    a!.destroy();
    b!.destroy();
  } finally {
    await one.stop();
    await two.stop();
  }
}

function browser(): void {
  log(`1 MB note in the browser, live editing off and on (web/e2e/collab-bench.spec.ts), load average ${load()}`);
  const built = spawnSync(process.execPath, ['scripts/build-stamp.mjs', 'check'], { cwd: ROOT, stdio: 'inherit' });
  if (built.status !== 0) {
    const build = spawnSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('the build failed');
  }
  const run = spawnSync(
    'npx',
    ['playwright', 'test', '--config', 'web/e2e/playwright.config.ts', '--grep', '@bench 1 MB note', 'collab-bench'],
    { cwd: ROOT, env: { ...process.env, VELLUM_E2E_BENCH: '1' }, encoding: 'utf8' },
  );
  const lines = `${run.stdout}\n${run.stderr}`.split('\n').filter((l) => l.includes('collab-bench {'));
  if (run.status !== 0 || lines.length === 0) {
    process.stdout.write(run.stdout + run.stderr);
    throw new Error('the browser measurement failed');
  }
  for (const line of lines) {
    const r = JSON.parse(line.slice(line.indexOf('{')));
    log(
      `  keystroke in a 1 MB note, preview on, live editing ${r.live ? 'on (another participant connected)' : 'off'}: p50 ${r.p50} ms, p90 ${r.p90} ms, max ${r.max} ms over ${r.keys} keys (Event Timing; under 16 ms counts as 0)`,
    );
  }
  log(`  load average after ${load()}`);
}

const pgUrl = process.env.TEST_DATABASE_URL?.trim() || undefined;
const redisUrl = process.env.TEST_REDIS_URL?.trim() || undefined;
log(`node ${process.version}, ${os.cpus().length} cores, load average ${load()}`);
for (const kind of pgUrl !== undefined ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const)) {
  if (kind === 'postgres') process.env.BENCH_DATABASE_URL ??= pgUrl;
  const scratch = await scratchDatabase(kind, 'collab');
  try {
    await oneInstance(kind, scratch.url);
  } finally {
    await scratch.drop();
  }
}
if (pgUrl !== undefined && redisUrl !== undefined) {
  const scratch = await scratchDatabase('postgres', 'collab2');
  try {
    await twoInstances(scratch.url, redisUrl);
  } finally {
    await scratch.drop();
  }
} else log('two instances: set TEST_DATABASE_URL and TEST_REDIS_URL');
if (!args['no-browser']) browser();
process.exit(0);
