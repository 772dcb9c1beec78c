// Live co-editing: `npm run bench:collab` (issue #39). In one process: the app(s) and Node clients
// (@hocuspocus/provider over ws). A keystroke's latency is the time from one client's insert to its
// arrival in another client's document: on one instance (SQLite, or PostgreSQL with
// TEST_DATABASE_URL), and across two instances sharing PostgreSQL and Redis (TEST_DATABASE_URL and
// TEST_REDIS_URL set). Memory per open document: heap growth over DOCS notes each open by a client.
import { parseArgs } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createScratchDatabase, type DatabaseKind } from '../test/helpers/databases.js';
import { buildTestApp, newSession, testConfig } from '../test/helpers/harness.js';
import { until } from '../test/helpers/until.js';
import { connect, listening } from '../test/collab/support.js';

const { values: args } = parseArgs({
  options: { keys: { type: 'string', default: '300' }, docs: { type: 'string', default: '200' } },
});
const KEYS = Number(args.keys);
const DOCS = Number(args.docs);
const log = (message: string) => process.stdout.write(`[collab bench] ${message}\n`);
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

async function instance(kind: DatabaseKind, url: string, env: Record<string, string>) {
  const config = testConfig(url, { COLLAB_IDLE_SECONDS: '5', ...env });
  const database = openDatabase(config.database);
  await migrateToLatest(database.db);
  const app = await buildTestApp(config, database);
  return { app, database, ws: await listening(app), kind };
}

async function keystrokes(a: FastifyInstance, wsA: string, wsB: string): Promise<number[]> {
  const user = await newSession(a, 'bench');
  const res = await a.inject({
    method: 'POST',
    url: '/api/notes',
    headers: user.auth,
    payload: { title: 't', content: '' },
  });
  const id = res.json().id as string;
  const one = connect(wsA, id, user.accessToken);
  const two = connect(wsB, id, user.accessToken);
  await Promise.all([one.ready, two.ready]);
  const times: number[] = [];
  for (let i = 0; i < KEYS; i += 1) {
    const length = one.content.length + 1;
    const arrived = new Promise<void>((resolve) => {
      const check = () => {
        if (two.content.length >= length) {
          two.content.unobserve(check);
          resolve();
        }
      };
      two.content.observe(check);
    });
    const start = performance.now();
    one.content.insert(one.content.length, 'x');
    await arrived;
    times.push(performance.now() - start);
  }
  one.destroy();
  two.destroy();
  return times;
}

const report = (label: string, times: number[]) =>
  log(`${label}: ${times.length} keystrokes, p50 ${pct(times, 50).toFixed(2)} ms, p95 ${pct(times, 95).toFixed(2)} ms`);

const pg = process.env.TEST_DATABASE_URL !== undefined && process.env.TEST_DATABASE_URL !== '';
const kind: DatabaseKind = pg ? 'postgres' : 'sqlite';
const scratch = await createScratchDatabase(kind);
const a = await instance(kind, scratch.url, {});
report(`one instance (${kind})`, await keystrokes(a.app, a.ws, a.ws));

// Memory per open document.
const user = await newSession(a.app, 'mem');
const ids: string[] = [];
for (let i = 0; i < DOCS; i += 1) {
  const res = await a.app.inject({
    method: 'POST',
    url: '/api/notes',
    headers: user.auth,
    payload: { title: `n${i}`, content: 'lorem ipsum dolor sit amet\n'.repeat(40) },
  });
  ids.push(res.json().id);
}
global.gc?.();
const before = process.memoryUsage();
const clients = ids.map((id) => connect(a.ws, id, user.accessToken));
await Promise.all(clients.map((c) => c.ready));
await until(() => a.app.collab.documentCount === DOCS, 'every document open');
global.gc?.();
const after = process.memoryUsage();
log(
  `${DOCS} open documents (1 KiB each, one client each, clients in this process too): heap +${((after.heapUsed - before.heapUsed) / DOCS / 1024).toFixed(1)} KiB, RSS +${((after.rss - before.rss) / DOCS / 1024).toFixed(1)} KiB per document`,
);
for (const c of clients) c.destroy();
await until(() => a.app.collab.documentCount === 0, 'every document closed');

const redis = process.env.TEST_REDIS_URL;
if (pg && redis !== undefined && redis !== '') {
  await a.app.close();
  await a.database.close();
  const env = { REDIS_URL: redis, REDIS_KEY_PREFIX: `bench${Date.now()}:` };
  const one = await instance(kind, scratch.url, env);
  const two = await instance(kind, scratch.url, env);
  report('two instances (PostgreSQL + Redis)', await keystrokes(one.app, one.ws, two.ws));
  for (const x of [one, two]) {
    await x.app.close();
    await x.database.close();
  }
} else {
  log('two instances: set TEST_DATABASE_URL and TEST_REDIS_URL');
  await a.app.close();
  await a.database.close();
}
await scratch.drop();
process.exit(0);
